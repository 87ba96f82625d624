/**
 * The core's process-wide state has one list (nodes/shared/transport/processState.ts) and one
 * reset: each entry's reset really returns its module to the state at load.
 */
import { FakeClock } from '../support/fakeClock';
import { clock, systemClock, useClock } from '../../nodes/shared/transport/clock';
import { authFailure, inspectFailure } from '../../nodes/shared/transport/failureFacts';
import { coreProcessState, resetCoreProcessState } from '../../nodes/shared/transport/processState';
import { acquireSlot, recordAnswer } from '../../nodes/shared/transport/rateLimiter';
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';
import {
	thisProcessLedger,
	resetDeliveryLedger,
} from '../../nodes/LearningPlatformTrigger/deliveryLedger';
import {
	recoverFromDelivery,
	resetRecoveryState,
} from '../../nodes/LearningPlatformTrigger/recoverySchedule';

afterEach(() => resetCoreProcessState());

test('lists the four modules that keep state for the process', () => {
	expect(coreProcessState.map((state) => state.file).sort()).toEqual([
		'clock.ts',
		'failureFacts.ts',
		'rateLimiter.ts',
		'tokenExchange.ts',
	]);
});

test('puts the system clock back', () => {
	useClock(new FakeClock());
	expect(clock()).not.toBe(systemClock);
	resetCoreProcessState();
	expect(clock()).toBe(systemClock);
});

test('forgets the recent credential-exchange failures', () => {
	authFailure({ kind: 'refused', message: 'Refresh token refused (process state test)' });
	const wrapped = new Error('Refresh token refused (process state test)');
	expect(inspectFailure(wrapped).authFailure?.kind).toBe('refused');
	resetCoreProcessState();
	expect(inspectFailure(wrapped).authFailure).toBeUndefined();
});

test('forgets the rate windows', async () => {
	const time = new FakeClock();
	useClock(time);
	const refused = await acquireSlot('process-state-test');
	recordAnswer(refused, { status: 429, headers: { 'retry-after': '60' } });
	resetCoreProcessState();
	useClock(time);
	// without the reset this slot would wait out the Retry-After minute
	const ticket = await acquireSlot('process-state-test');
	recordAnswer(ticket, { status: 200, headers: {} });
	expect(time.slept).toEqual([]);
});

test("the webhook trigger's two: the ledger forgets every delivery, recovery its runs", async () => {
	const ledger = thisProcessLedger();
	await ledger.admit({}, 'key-of-a-delivery', { writableEnded: false, statusCode: 0 });
	expect(ledger.size).toBe(1);
	resetDeliveryLedger();
	expect(thisProcessLedger()).not.toBe(ledger);
	expect(thisProcessLedger().size).toBe(0);

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
	recoverFromDelivery.call(context, staticData, 1);
	expect(staticData.recoveryScannedAt).toBe(now - 60_000);
	// after a reset the process "starts" later than that run: its first delivery runs one
	now += 1_000;
	resetRecoveryState(now);
	recoverFromDelivery.call(context, staticData, 1);
	expect(staticData.recoveryScannedAt).toBe(now);
});
