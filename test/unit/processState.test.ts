/**
 * The core's process-wide state has one register (nodes/shared/transport/processState.ts) and one
 * reset. Each part is filled as the package fills it (a test's clock, a 429 in a rate window,
 * real refresh-token exchanges against the sandbox, a remembered credential failure); after
 * resetCoreProcessState() each part must be observably empty, where before the reset the same
 * observation showed the state in force.
 */
import { OutboundHttp } from '@n8n/backend-network';
import { Container } from '@n8n/di';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
	IWebhookFunctions,
} from 'n8n-workflow';

import { FakeClock } from '../support/fakeClock';
import { exchangeElsewhere, newCredential } from '../transport/helpers';
import { clock, systemClock, useClock } from '../../nodes/shared/transport/clock';
import {
	AUTH_FAILURE,
	authFailure,
	inspectFailure,
} from '../../nodes/shared/transport/failureFacts';
import { coreProcessState, resetCoreProcessState } from '../../nodes/shared/transport/processState';
import { acquireSlot, recordAnswer } from '../../nodes/shared/transport/rateLimiter';
import { exchangeRefreshToken } from '../../nodes/shared/transport/tokenExchange';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import {
	thisProcessLedgers,
	resetDeliveryLedger,
} from '../../nodes/LearningPlatformTrigger/deliveries/processLedgers';
import {
	recoverFromDelivery,
	resetRecoveryState,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await startSandbox({ quiet: true, demoData: false });
});
afterAll(async () => await sb.close());
afterEach(() => resetCoreProcessState());

/** n8n's outbound HTTP client, as n8n hands it to the credential's preAuthentication. */
const helpers: IHttpRequestHelper['helpers'] = {
	httpRequest: async (options: IHttpRequestOptions) =>
		await Container.get(OutboundHttp).requests().request(options),
};
const exchange = async (data: ICredentialDataDecryptedObject) =>
	await exchangeRefreshToken(helpers, { ...data });
/** The kind of credential failure an exchange ended with ('ok' when it returned a pair). */
const outcome = async (exchanging: Promise<unknown>) =>
	await exchanging.then(
		() => 'ok',
		(error: IDataObject) => String(error[AUTH_FAILURE]),
	);
/** How many exchanges (of any token) the sandbox received for this API user. */
const exchangesSent = async (username: string) =>
	(await sb.control.requests({ username, path: '/apikeys' })).length;

test('the register holds the four parts the next test fills and empties', () => {
	// a part added to the register needs its own fill and check in the next test
	expect(coreProcessState.map((state) => state.file).sort()).toEqual([
		'clock.ts',
		'failureFacts.ts',
		'rateLimiter.ts',
		'tokenExchange.ts',
	]);
});

test('resetCoreProcessState empties every part: clock, rate windows, exchanges (spent, refused, in flight), recent failures', async () => {
	// --- the token exchange, on the system clock (a refusal is remembered for 60 s of it)
	// a token this process spent: asked again, it fails as stale from memory, nothing sent
	const spent = await newCredential(sb, 'ps-spent');
	expect(await outcome(exchange(spent.data))).toBe('ok');
	expect(await exchangesSent(spent.username)).toBe(1);
	expect(await outcome(exchange(spent.data))).toBe('stale');
	expect(await exchangesSent(spent.username)).toBe(1);
	// a token the platform refused (another process spent it): refused again from memory
	const refused = await newCredential(sb, 'ps-refused');
	expect((await exchangeElsewhere(sb, refused.username, refused.refreshToken)).status).toBe(200);
	const refusal = await exchange(refused.data).catch((error: Error) => error);
	expect((refusal as unknown as IDataObject)[AUTH_FAILURE]).toBe('refused');
	expect(await outcome(exchange(refused.data))).toBe('refused');
	expect(await exchangesSent(refused.username)).toBe(2); // elsewhere, then this process once

	// --- recent credential failures: one made by hand, and the real refusal's, found by message
	const message = 'Refresh token refused (process state test)';
	authFailure({ kind: 'refused', message });
	expect(inspectFailure(new Error(message)).authFailure?.kind).toBe('refused');
	expect(inspectFailure(new Error((refusal as Error).message)).authFailure?.kind).toBe('refused');

	// --- the clock and a rate window: a 429 with a minute's Retry-After, on a fake clock
	const time = new FakeClock();
	useClock(time);
	expect(clock()).toBe(time);
	const limited = await acquireSlot('process-state-test');
	recordAnswer(limited, { status: 429, headers: { 'retry-after': '60' } });

	// --- an exchange in flight (its entry is made before the call returns)
	const flying = await newCredential(sb, 'ps-flight');
	const first = outcome(exchange(flying.data));

	resetCoreProcessState();

	// the system clock again
	expect(clock()).toBe(systemClock);
	// no failure found by its message any more (checked before any exchange below fails anew)
	expect(inspectFailure(new Error(message)).authFailure).toBeUndefined();
	expect(inspectFailure(new Error((refusal as Error).message)).authFailure).toBeUndefined();
	// a caller of the token in flight runs its own exchange instead of joining the first one
	const second = outcome(exchange(flying.data));
	await Promise.all([first, second]);
	expect(await exchangesSent(flying.username)).toBe(2);
	// the spent token is sent again (the platform refuses it: it was rotated), not failed as stale
	expect(await outcome(exchange(spent.data))).toBe('refused');
	expect(await exchangesSent(spent.username)).toBe(2);
	// the refused token is sent again within the minute it would have been remembered
	expect(await outcome(exchange(refused.data))).toBe('refused');
	expect(await exchangesSent(refused.username)).toBe(3);
	// the rate window is gone: at the instant of the 429, a request goes without waiting
	useClock(time);
	const next = await acquireSlot('process-state-test');
	recordAnswer(next, { status: 200, headers: {} });
	expect(time.slept).toEqual([]);
});

test("the webhook trigger's two: the ledger forgets every delivery, recovery its runs", async () => {
	const ledgers = thisProcessLedgers();
	await ledgers.of('w:n').admit({}, 'key-of-a-delivery', { writableEnded: false, statusCode: 0 });
	expect(ledgers.size).toBe(1);
	resetDeliveryLedger();
	expect(thisProcessLedgers()).not.toBe(ledgers);
	expect(thisProcessLedgers().size).toBe(0);

	let now = 10_000_000;
	useClock({ now: () => now, sleep: async () => await new Promise<void>(() => {}) });
	const context = {
		getWorkflow: () => ({ id: 'wf' }),
		getNode: () => ({ id: 'n' }),
		logger: { info: () => undefined, warn: () => undefined },
	} as unknown as IWebhookFunctions;
	// a run marked by another process since this one started, 1 minute ago: not this one's turn
	const staticData: IDataObject = { recoveryScannedAt: now - 60_000 };
	resetRecoveryState(now - 120_000);
	recoverFromDelivery(context, staticData, 1, false);
	expect(staticData.recoveryScannedAt).toBe(now - 60_000);
	// after a reset the process "starts" later than that run: its first delivery runs one
	now += 1_000;
	resetRecoveryState(now);
	recoverFromDelivery(context, staticData, 1, false);
	expect(staticData.recoveryScannedAt).toBe(now);
});
