/**
 * Refresh-token rotation through n8n's real execution path: WorkflowExecute ->
 * httpRequestWithAuthentication -> (a mirror of n8n 2.40.7's) CredentialsHelper.preAuthentication
 * -> our credential, with the credential row in a CredentialStore. "Another n8n process" is
 * simulated by exchanging straight against the sandbox and writing the new pair into the store.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { LearningPlatformApi } from '../../credentials/LearningPlatformApi.credentials';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { REFUSAL_SETTLE_MS } from '../../nodes/shared/transport/refusal';
import { withAheadClock } from '../support/fakeClock';
import { CredentialStore, executeNode } from '../support/n8n';
import {
	exchangeElsewhere,
	newCredential,
	outputOf,
	probe,
	rawGet,
	roots,
	Secrets,
	withPair,
	type ProbePlan,
} from '../transport/helpers';

/** A credential row that counts loads and can hand out an old snapshot (a caller that loaded early). */
class InstrumentedStore extends CredentialStore {
	loads = 0;
	private staleAt = new Map<number, ICredentialDataDecryptedObject>();

	/** The `n`-th load from now returns `data` instead of the stored row. */
	serveOnLoad(n: number, data: ICredentialDataDecryptedObject) {
		this.staleAt.set(this.loads + n, structuredClone(data));
	}

	override get data(): ICredentialDataDecryptedObject {
		this.loads++;
		const stale = this.staleAt.get(this.loads);
		if (stale) {
			this.staleAt.delete(this.loads);
			return stale;
		}
		return super.data;
	}
}

let sb: SandboxHandle;
const secrets = new Secrets();
const errorTexts: string[] = [];

async function run(store: CredentialStore, plan: ProbePlan) {
	const result = await executeNode({ nodeType: probe(plan), credentials: store });
	if (result.error)
		errorTexts.push(
			JSON.stringify(result.error),
			result.error.message,
			String(result.error.description),
		);
	const out = outputOf(result);
	for (const r of out) if (r.error) errorTexts.push(r.error.dump);
	return { result, out };
}

const events: ProbePlan = { calls: [{ method: 'GET', root: 'webhook', path: '/events' }] };

async function instrumented(prefix: string, writeDelayMs = 0) {
	const c = await newCredential(sb, prefix);
	secrets.add(c.refreshToken);
	return { ...c, store: new InstrumentedStore(c.data, writeDelayMs) };
}

beforeAll(async () => {
	sb = await startSandbox({ quiet: true, demoData: false, rateLimitPerMinute: 6000 });
});

afterAll(async () => {
	// no secret in any error text seen in this file
	expect(secrets.size).toBeGreaterThan(0);
	expect(secrets.foundIn(errorTexts.join('\n'))).toEqual([]);
	await sb.close();
});

test('rotation stores both new values; the old pair is dead afterwards', async () => {
	const { store, username, refreshToken: t1 } = await instrumented('rot-persist');
	const failedBefore = (await sb.control.auth(username)).failed_exchanges;

	// 1. new credential (empty API key): exchange before the first request
	const first = await run(store, events);
	expect(first.out[0].ok).toBe(true);
	const live1 = await secrets.addLive(sb, username);
	expect(store.writes).toHaveLength(1);
	expect(store.data).toMatchObject({ refreshToken: live1.refresh_token, apiKey: live1.api_key });
	expect(Date.parse(store.data.apiKeyExpiresAt as string)).toBeGreaterThan(Date.now() + 86_000_000);
	expect(live1.failed_exchanges).toBe(failedBefore);
	expect((await exchangeElsewhere(sb, username, t1)).status).toBe(401);

	// 2. the server expires the key: 401 -> refresh -> the request is repeated with the new key
	await sb.control.expireApiKey(username);
	const second = await run(store, events);
	expect(second.out[0].ok).toBe(true);
	const live2 = await secrets.addLive(sb, username);
	expect(store.writes).toHaveLength(2);
	expect(store.data).toMatchObject({ refreshToken: live2.refresh_token, apiKey: live2.api_key });
	expect(live2.exchanges).toBe(2);
	expect(live2.failed_exchanges).toBe(failedBefore + 1); // only our probe with the dead t1 above
	// the previous pair: refresh token refused, API key refused
	expect((await exchangeElsewhere(sb, username, live1.refresh_token)).status).toBe(401);
	expect((await rawGet(`${roots(sb).webhook}/events`, live1.api_key!)).status).toBe(401);
	expect((await rawGet(`${roots(sb).webhook}/events`, live2.api_key!)).status).toBe(200);
});

test('an API key past its stored expiry is not sent; the 401 refreshes it (no waiting for the server)', async () => {
	const { store, username } = await instrumented('rot-clock');
	await run(store, events);
	const before = await sb.control.auth(username);
	// the key is still live on the server, but our 24 h are over
	store.replace({ ...store.data, apiKeyExpiresAt: new Date(Date.now() - 1000).toISOString() });
	await sb.control.clearRequests();
	const { out } = await run(store, events);
	expect(out[0].ok).toBe(true);
	const after = await secrets.addLive(sb, username);
	expect(after.exchanges).toBe(before.exchanges + 1);
	expect(store.data).toMatchObject({ refreshToken: after.refresh_token, apiKey: after.api_key });
	const seen = (await sb.control.requests({})).map(
		(r) => `${r.path.split('/').pop()}:${r.authorization_kind}:${r.status}`,
	);
	expect(seen).toEqual(['events:none:401', 'apikeys:refresh:200', 'events:api_key:200']);
});

test('20 concurrent callers: one exchange, all succeed (empty key, and server-expired key)', async () => {
	const { store, username } = await instrumented('rot-20');
	const twenty: ProbePlan = {
		concurrent: true,
		calls: Array.from({ length: 20 }, () => ({ method: 'GET', root: 'webhook', path: '/events' })),
	};

	const a = await run(store, twenty);
	expect(a.result.error).toBeUndefined();
	expect(a.out.filter((r) => r.ok)).toHaveLength(20);
	expect((await sb.control.auth(username)).exchanges).toBe(1);

	// all 20 now hold a key the server has expired: 20 x 401 -> 20 preAuthentications at once
	await sb.control.expireApiKey(username);
	const writesBefore = store.writes.length;
	jestSpy.mockClear();
	const b = await run(store, twenty);
	// many callers reached preAuthentication at once (shared the flight or were told "stale")
	expect(jestSpy.mock.calls.length).toBeGreaterThan(1);
	expect(b.out.filter((r) => r.ok)).toHaveLength(20);
	const live = await secrets.addLive(sb, username);
	expect(live.exchanges).toBe(2);
	expect(live.failed_exchanges).toBe(0);
	// one rotation in one process: the credential row written once, with the new pair
	const newWrites = store.writes.slice(writesBefore);
	expect(newWrites).toEqual([
		expect.objectContaining({ refreshToken: live.refresh_token, apiKey: live.api_key }),
	]);
	expect(store.data).toMatchObject({ refreshToken: live.refresh_token, apiKey: live.api_key });
});

test('20 concurrent callers, a credential store that takes 2.5 s per write: one write, all succeed', async () => {
	const { store, username } = await instrumented('rot-20-slow', 2_500);
	const twenty: ProbePlan = {
		concurrent: true,
		calls: Array.from({ length: 20 }, () => ({ method: 'GET', root: 'webhook', path: '/events' })),
	};
	// the first rotation (empty key) and, after the server expired the key, the second
	for (const round of [1, 2]) {
		if (round === 2) await sb.control.expireApiKey(username);
		const writesBefore = store.writes.length;
		let mostWritingAtOnce = 0;
		const watch = setInterval(() => {
			mostWritingAtOnce = Math.max(mostWritingAtOnce, store.writing);
		}, 20);
		const outcome = await run(store, twenty).finally(() => clearInterval(watch));
		expect(outcome.result.error).toBeUndefined();
		expect(outcome.out.filter((r) => r.ok)).toHaveLength(20);
		const live = await secrets.addLive(sb, username);
		expect(live.exchanges).toBe(round);
		expect(live.failed_exchanges).toBe(0);
		// no queue of writes on the row: one, holding the new pair
		expect(store.writes.slice(writesBefore)).toEqual([
			expect.objectContaining({ refreshToken: live.refresh_token, apiKey: live.api_key }),
		]);
		expect(mostWritingAtOnce).toBe(1);
	}
});

test('a late caller holding a spent token: auth error, nothing stored, succeeds on retry after another process rotated', async () => {
	const { store, username, data } = await instrumented('rot-late');
	// this process rotates T1 -> T2
	await run(store, events);
	const t2 = store.data;
	// another process rotates T2 -> T3 and stores it
	const other = await exchangeElsewhere(sb, username, t2.refreshToken as string);
	secrets.add(other.json.refresh_token, other.json.api_key);
	store.replace(withPair(t2, other.json));
	const writes = store.writes.length;
	const exchangesBefore = (await sb.control.auth(username)).exchanges;
	await sb.control.clearRequests();

	// the late caller: httpRequestWithAuthentication loads T1 (spent here), API key empty.
	// Load 1 is the transport's own read of the connection settings; load 2 is n8n's.
	jestSpy.mockClear();
	store.serveOnLoad(2, data);
	const { out } = await run(store, events);
	expect(out[0].ok).toBe(true);

	// the stale attempt threw (preAuthentication ran once for it, sent nothing) and stored nothing
	expect(jestSpy).toHaveBeenCalledTimes(1);
	await expect(jestSpy.mock.results[0].value).rejects.toThrow(/stale credential/);
	expect(store.writes).toHaveLength(writes);
	const live = await sb.control.auth(username);
	expect(live.exchanges).toBe(exchangesBefore);
	expect(live.refresh_token).toBe(other.json.refresh_token);
	expect(store.data.refreshToken).toBe(other.json.refresh_token);
	// no exchange was attempted with the spent token; the retry used the other process's key
	const requests = await sb.control.requests({});
	expect(requests.filter((r) => r.path.endsWith('/apikeys'))).toHaveLength(0);
	expect(requests.map((r) => `${r.authorization_kind}:${r.status}`)).toEqual(['api_key:200']);
});

test('another process rotated under us (our key and token both dead): retried with the reloaded credential', async () => {
	const { store, username } = await instrumented('rot-race');
	await run(store, events);
	const ours = store.data;
	// the other process rotates but we have not seen its write yet (our next load is the old row)
	const other = await exchangeElsewhere(sb, username, ours.refreshToken as string);
	secrets.add(other.json.refresh_token, other.json.api_key);
	store.replace(withPair(ours, other.json));
	store.serveOnLoad(2, ours);
	const writes = store.writes.length;

	const { out } = await run(store, events);
	expect(out[0].ok).toBe(true);
	// our exchange (old token) was refused: nothing stored; the retry used their pair
	expect(store.writes).toHaveLength(writes);
	expect(store.data).toMatchObject({
		refreshToken: other.json.refresh_token,
		apiKey: other.json.api_key,
	});
	const live = await sb.control.auth(username);
	expect(live.refresh_token).toBe(other.json.refresh_token);
	expect(live.failed_exchanges).toBe(1);
});

test('another process rotated and is slow to store its pair: our refused exchange waits for the store, then succeeds', async () => {
	const { store, username } = await instrumented('rot-slow-store');
	await run(store, events);
	const ours = store.data;
	// the other process has rotated (our token is dead) but its write lands only 2.5 s later
	const other = await exchangeElsewhere(sb, username, ours.refreshToken as string);
	secrets.add(other.json.refresh_token, other.json.api_key);
	const writes = store.writes.length;
	jestSpy.mockClear();

	const { out, slept, sleptAtWrite } = await withAheadClock(async (time) => {
		let sleptAtWrite: number | undefined;
		time.onSleep = (elapsed) => {
			if (sleptAtWrite === undefined && elapsed >= 2_500) {
				store.replace(withPair(ours, other.json));
				sleptAtWrite = time.slept;
			}
		};
		return { ...(await run(store, events)), slept: time.slept, sleptAtWrite };
	});
	expect(out[0].ok).toBe(true);
	// it waited (virtual time) until the store changed, and not one pause after it: the wait ended
	// with the write the test recorded, not with the settle time
	expect(sleptAtWrite).toBeGreaterThan(0);
	expect(slept).toBe(sleptAtWrite);
	expect(slept).toBeLessThan(REFUSAL_SETTLE_MS);
	// one refused exchange with our token; the repeat used the other process's live key
	expect(jestSpy).toHaveBeenCalledTimes(1);
	expect(store.writes).toHaveLength(writes); // n8n stored nothing for this execution
	const live = await sb.control.auth(username);
	expect(live.refresh_token).toBe(other.json.refresh_token);
	expect(store.data).toMatchObject({ refreshToken: live.refresh_token, apiKey: live.api_key });
});

test('a refused refresh (wrong username): clear error after the settle time, nothing stored is overwritten, the token sent once', async () => {
	const { store, username, data } = await instrumented('rot-401');
	const wrongUser = `${username}-typo`;
	const initial = { ...data, username: wrongUser };
	store.replace(initial);
	jestSpy.mockClear();

	const { out, slept, span } = await withAheadClock(async (time) => {
		const from = time.now();
		const result = await run(store, events);
		// the run's length on the clock the transport reads: its pauses plus the real time it took
		return { ...result, slept: time.slept, span: time.now() - from };
	});
	expect(out[0].ok).toBe(false);
	const error = out[0].error!;
	expect(error.message).toBe(
		`The refresh token for API user '${wrongUser}' on tenancy '${sb.tenancyId}' was rejected by the learning platform (401). Paste a new refresh token in the credential.`,
	);
	expect(error.description).toMatch(/Nothing stored in the credential was changed/);
	expect(error.httpCode).toBe('401');
	// final only once the stored credential kept the refused token for the settle time, on the
	// transport's clock (however long the real part took), and no pause beyond it
	expect(span).toBeGreaterThanOrEqual(REFUSAL_SETTLE_MS);
	expect(slept).toBeGreaterThan(0);
	expect(slept).toBeLessThanOrEqual(REFUSAL_SETTLE_MS);
	// nothing persisted; the stored row is exactly what it was
	expect(store.writes).toHaveLength(0);
	expect(store.data).toEqual(initial);
	// the real token of the real user is untouched
	const live = await sb.control.auth(username);
	expect(live).toMatchObject({ refresh_token: data.refreshToken, exchanges: 0 });
	// n8n did not call preAuthentication a second time within one httpRequestWithAuthentication
	// (it would, with the same loaded credential object, if our error looked like an HTTP 401),
	// and the transport did not repeat the request while the stored credential was unchanged
	expect(jestSpy).toHaveBeenCalledTimes(1);
	// the refused token was sent once only; the refusal invalidated nothing
	expect(await sb.control.auth(username)).toMatchObject({
		refresh_token: data.refreshToken,
		exchanges: 0,
		failed_exchanges: 1,
	});
	expect(error.dump).not.toContain(data.refreshToken as string);
});

test('404 and 500 answers never trigger an exchange', async () => {
	const { store, username } = await instrumented('rot-404');
	await run(store, events);
	const before = await sb.control.auth(username);
	jestSpy.mockClear();

	const missing = await run(store, {
		calls: [{ method: 'GET', root: 'webhook', path: '/99999999' }],
	});
	expect(missing.out[0].error?.httpCode).toBe('404');
	await sb.control.setFaults({ kind: 'http500', count: 50, pathPattern: '/events$' });
	const failing = await run(store, events);
	await sb.control.clearFaults();
	expect(failing.out[0].error?.httpCode).toBe('500');
	const post500 = await sb.control.setFaults({ kind: 'http500', count: 1, method: 'POST' });
	expect(post500.faults).toHaveLength(1);
	const created = await run(store, {
		calls: [
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/rot-404' } },
			},
		],
	});
	await sb.control.clearFaults();
	expect(created.out[0].error?.httpCode).toBe('500');

	expect(jestSpy).not.toHaveBeenCalled();
	const after = await sb.control.auth(username);
	expect(after.exchanges).toBe(before.exchanges);
	expect(after.failed_exchanges).toBe(before.failed_exchanges);
	expect(store.data.refreshToken).toBe(after.refresh_token);
});

const jestSpy = jest.spyOn(LearningPlatformApi.prototype, 'preAuthentication');
