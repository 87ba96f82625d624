/**
 * The refresh-token exchange run by the credential's preAuthentication, called directly with
 * n8n's real outbound HTTP client (the `helpers.httpRequest` n8n hands to preAuthentication),
 * against the sandbox.
 */
import { OutboundHttp } from '@n8n/backend-network';
import { Container } from '@n8n/di';
import type { IHttpRequestHelper, IHttpRequestOptions } from 'n8n-workflow';

import { LearningPlatformApi } from '../../credentials/LearningPlatformApi.credentials';
import { AUTH_FAILURE, DEAD_SINCE, DEAD_TOKEN } from '../../nodes/shared/transport/failureFacts';
import { credentialFingerprint } from '../../nodes/shared/transport/tokenExchange';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { exchangeElsewhere, newCredential, roots, rawGet } from '../transport/helpers';

let sb: SandboxHandle;
const credentialType = new LearningPlatformApi();

const helpers: IHttpRequestHelper = {
	helpers: {
		httpRequest: async (options: IHttpRequestOptions) =>
			await Container.get(OutboundHttp).requests().request(options),
	},
};

async function preAuthenticate(data: Record<string, unknown>) {
	return await credentialType.preAuthentication.call(helpers, data as never);
}

async function refreshRequests(username: string) {
	return (await sb.control.requests({ username })).filter((r) => r.path.endsWith('/apikeys'));
}

beforeAll(async () => {
	sb = await startSandbox({ quiet: true, demoData: false });
});

afterAll(async () => {
	await sb.close();
});

test('one exchange rotates both values; preAuthentication returns the new pair and its expiry', async () => {
	const { data, username, refreshToken } = await newCredential(sb, 'x-rotate');
	const before = Date.now();
	const pair = await preAuthenticate(data);

	const live = await sb.control.auth(username);
	expect(pair).toEqual({
		apiKey: live.api_key,
		refreshToken: live.refresh_token,
		apiKeyExpiresAt: expect.any(String),
	});
	expect(pair.refreshToken).not.toBe(refreshToken);
	const expiresAt = Date.parse(pair.apiKeyExpiresAt as string);
	expect(expiresAt).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
	expect(expiresAt).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);
	// the previous token is dead, the new key works
	expect((await exchangeElsewhere(sb, username, refreshToken)).status).toBe(401);
	expect((await rawGet(`${roots(sb).webhook}/events`, pair.apiKey as string)).status).toBe(200);
});

test('20 simultaneous callers with the same token share ONE exchange; only the caller that ran it gets the pair', async () => {
	const { data, username } = await newCredential(sb, 'x-flight');
	const settled = await Promise.allSettled(
		Array.from({ length: 20 }, async () => await preAuthenticate({ ...data })),
	);
	const live = await sb.control.auth(username);
	expect(live.exchanges).toBe(1);
	expect(live.failed_exchanges).toBe(0);
	expect(await refreshRequests(username)).toHaveLength(1);

	// n8n stores what preAuthentication returns, once per caller: one pair returned, one write
	const pairs = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
	expect(pairs).toEqual([
		{
			apiKey: live.api_key,
			refreshToken: live.refresh_token,
			apiKeyExpiresAt: expect.any(String),
		},
	]);
	// the 19 others: the spent-token failure the transport waits out (stored credential moves on)
	const failures = settled.flatMap((r) =>
		r.status === 'rejected' ? [r.reason as Error & Record<string, unknown>] : [],
	);
	expect(failures).toHaveLength(19);
	for (const error of failures) {
		expect(error[AUTH_FAILURE]).toBe('stale');
		expect(error[DEAD_TOKEN]).toBe(credentialFingerprint(data));
		expect(typeof error[DEAD_SINCE]).toBe('number');
		expect(JSON.stringify(error) + error.message).not.toContain(live.refresh_token);
		expect(JSON.stringify(error) + error.message).not.toContain(live.api_key);
	}
});

test('callers that joined an exchange which failed get its failure, each its own copy', async () => {
	const { data, username } = await newCredential(sb, 'x-flight-fail');
	await sb.control.setFaults({ kind: 'http500', count: 1, pathPattern: '/apikeys$' });
	const settled = await Promise.allSettled(
		Array.from({ length: 5 }, async () => await preAuthenticate({ ...data })),
	);
	await sb.control.clearFaults();
	expect(await refreshRequests(username)).toHaveLength(1);
	const errors = settled.map((r) => (r.status === 'rejected' ? (r.reason as Error) : undefined));
	expect(
		errors.every(
			(e) => (e as Record<string, unknown> | undefined)?.[AUTH_FAILURE] === 'unavailable',
		),
	).toBe(true);
	expect(new Set(errors).size).toBe(5);
	// the token was not spent: the next caller exchanges it
	const pair = await preAuthenticate({ ...data });
	expect(pair.refreshToken).toBe((await sb.control.auth(username)).refresh_token);
});

test('a token this process already spent is never sent again nor answered from memory: stale failure', async () => {
	const { data, username } = await newCredential(sb, 'x-stale');
	await preAuthenticate({ ...data });

	const error = await preAuthenticate({ ...data }).then(
		() => undefined,
		(e: unknown) => e as Error & Record<string, unknown>,
	);
	expect(error).toBeDefined();
	expect(error![AUTH_FAILURE]).toBe('stale');
	expect(error!.message).toMatch(/stale credential/);
	expect(error![DEAD_TOKEN]).toBe(credentialFingerprint(data));
	// nothing was sent, and the pair it once produced was not handed out
	expect(await refreshRequests(username)).toHaveLength(1);
	expect((await sb.control.auth(username)).exchanges).toBe(1);
});

test('a refused exchange: error that does not look like an HTTP 401 to n8n, names user and tenancy, no secret', async () => {
	const { data, username, refreshToken } = await newCredential(sb, 'x-refused');
	const wrong = { ...data, username: `${username}-typo` };
	const attempt = async () =>
		(await preAuthenticate(wrong).catch((e: unknown) => e)) as Error & Record<string, unknown>;
	const errors = [await attempt(), await attempt()];
	await new Promise((r) => setTimeout(r, 300));
	errors.push(await attempt());

	for (const error of errors) {
		// httpRequestWithAuthentication re-runs preAuthentication when error.response.status is 401,
		// and NodeApiError replaces the message when it finds a status: none of these may be set
		for (const key of ['response', 'status', 'statusCode', 'code', 'httpCode', 'cause']) {
			expect(error[key]).toBeUndefined();
		}
		expect(error.message).toBe(
			`The refresh token for API user '${username}-typo' on tenancy '${sb.tenancyId}' was rejected by the learning platform (401). Paste a new refresh token in the credential.`,
		);
		expect(JSON.stringify(error) + error.message + String(error.description)).not.toContain(
			refreshToken,
		);
	}
	// every attempt reports the refusal with the token's fingerprint and the time of the one
	// refusal; whether it is final is the transport's decision, from the stored credential
	expect(errors.map((e) => e[AUTH_FAILURE])).toEqual(['refused', 'refused', 'refused']);
	expect(new Set(errors.map((e) => e[DEAD_TOKEN]))).toEqual(
		new Set([credentialFingerprint(wrong)]),
	);
	expect(new Set(errors.map((e) => e[DEAD_SINCE])).size).toBe(1);
	expect(credentialFingerprint(wrong)).not.toBe(credentialFingerprint(data));
	// a refused token is not sent again (one refused exchange), and a refusal invalidates nothing
	expect(await refreshRequests(username)).toHaveLength(1);
	const live = await sb.control.auth(username);
	expect(live).toMatchObject({ refresh_token: refreshToken, exchanges: 0, failed_exchanges: 1 });
});

test('an exchange that failed with 5xx or a dropped connection leaves the token usable (retry succeeds)', async () => {
	const { data, username } = await newCredential(sb, 'x-500');
	await sb.control.setFaults({ kind: 'http500', count: 1, pathPattern: '/apikeys$' });
	const first = (await preAuthenticate({ ...data }).catch((e: unknown) => e)) as Record<
		string,
		unknown
	>;
	expect(first[AUTH_FAILURE]).toBe('unavailable');
	await sb.control.setFaults({ kind: 'drop', count: 1, pathPattern: '/apikeys$' });
	const second = (await preAuthenticate({ ...data }).catch((e: unknown) => e)) as Record<
		string,
		unknown
	>;
	expect(second[AUTH_FAILURE]).toBe('unavailable');
	await sb.control.clearFaults();
	const pair = await preAuthenticate({ ...data });
	expect(pair.refreshToken).toBe((await sb.control.auth(username)).refresh_token);
});

test('an incomplete credential fails without any request', async () => {
	const { data, username } = await newCredential(sb, 'x-incomplete');
	const error = (await preAuthenticate({ ...data, refreshToken: '' }).catch(
		(e: unknown) => e,
	)) as Error & Record<string, unknown>;
	expect(error[AUTH_FAILURE]).toBe('invalid');
	expect(error.message).toMatch(/Refresh Token missing/);
	expect(await refreshRequests(username)).toHaveLength(0);
});

test('the exchange request carries the package User-Agent', async () => {
	const { data, username } = await newCredential(sb, 'x-ua');
	await preAuthenticate({ ...data });
	const [entry] = await refreshRequests(username);
	expect(entry.user_agent).toMatch(/^n8n-nodes-learning-platform\/\d+\.\d+\.\d+.* \(n8n\)$/);
	expect(entry.authorization_kind).toBe('refresh');
});
