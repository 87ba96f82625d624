/**
 * The core's process-wide state has one list (nodes/shared/transport/processState.ts) and one
 * reset: each entry's reset really returns its module to the state at load.
 */
import { FakeClock } from '../support/fakeClock';
import { clock, systemClock, useClock } from '../../nodes/shared/transport/clock';
import { authFailure, inspectFailure } from '../../nodes/shared/transport/failureFacts';
import { coreProcessState, resetCoreProcessState } from '../../nodes/shared/transport/processState';
import { acquireSlot, recordAnswer } from '../../nodes/shared/transport/rateLimiter';

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
