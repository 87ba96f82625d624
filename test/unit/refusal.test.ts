/**
 * The decision taken when the credential's exchange reports a dead refresh token, and the loop
 * that reads the stored credential, on a fake clock: minutes of waiting take no real time.
 */
import { FakeClock } from '../support/fakeClock';
import {
	decideAfterRefusal,
	REFUSAL_SETTLE_MS,
	settleRefusal,
} from '../../nodes/shared/transport/refusal';

const dead = { deadToken: 'fp-dead', deadSince: 1_000_000 };
/** The settle time users are told about (docs/nodes.md, "Credential"; docs/design.md, "Rotation"): 45 s. */
const SETTLE_MS = 45_000;

describe('decideAfterRefusal', () => {
	test('stored credential moved on (another execution stored a new pair): retry at once', () => {
		expect(
			decideAfterRefusal({ ...dead, stored: 'fp-new', now: dead.deadSince, pauses: 0 }),
		).toEqual({ action: 'retry', reason: 'moved on' });
		// however long it took to move on
		expect(
			decideAfterRefusal({
				...dead,
				stored: 'fp-new',
				now: dead.deadSince + 10 * SETTLE_MS,
				pauses: 30,
			}),
		).toEqual({
			action: 'retry',
			reason: 'moved on',
		});
	});

	test('superseded or stale, store not yet updated: pause, growing from 0.25 s to 5 s', () => {
		const pauses = [0, 1, 2, 3, 4, 5, 6].map((n) =>
			decideAfterRefusal({ ...dead, stored: 'fp-dead', now: dead.deadSince + 1000, pauses: n }),
		);
		expect(pauses).toEqual(
			[250, 500, 1000, 2000, 4000, 5000, 5000].map((ms) => ({ action: 'pause', ms })),
		);
	});

	test('a pause never runs past the settle time', () => {
		expect(
			decideAfterRefusal({
				...dead,
				stored: 'fp-dead',
				now: dead.deadSince + SETTLE_MS - 300,
				pauses: 10,
			}),
		).toEqual({ action: 'pause', ms: 300 });
	});

	test('really dead: the stored credential held the token for the whole settle time', () => {
		expect(
			decideAfterRefusal({
				...dead,
				stored: 'fp-dead',
				now: dead.deadSince + SETTLE_MS,
				pauses: 12,
			}),
		).toEqual({
			action: 'fail',
			reason: 'unchanged',
		});
		// a refusal remembered from another execution counts from when it happened
		expect(
			decideAfterRefusal({
				...dead,
				stored: 'fp-dead',
				now: dead.deadSince + SETTLE_MS + 1,
				pauses: 0,
			}).action,
		).toBe('fail');
	});

	test('the settle time is 45 s: still a pause 1 ms before, final from then on', () => {
		const at = (elapsed: number) =>
			decideAfterRefusal({ ...dead, stored: 'fp-dead', now: dead.deadSince + elapsed, pauses: 3 });
		expect(at(44_999)).toEqual({ action: 'pause', ms: 1 });
		expect(at(45_000)).toEqual({ action: 'fail', reason: 'unchanged' });
		// the constant the error message quotes says the same
		expect(REFUSAL_SETTLE_MS).toBe(45_000);
	});
});

describe('settleRefusal', () => {
	test('slow store: the credential moves on after 2.5 s -> moved on, after a few reads', async () => {
		const time = new FakeClock(dead.deadSince);
		const reads: number[] = [];
		const outcome = await settleRefusal(
			dead,
			async () => {
				reads.push(time.now() - dead.deadSince);
				return time.now() - dead.deadSince >= 2500 ? 'fp-new' : 'fp-dead';
			},
			time,
			() => undefined,
		);
		expect(outcome).toBe('moved on');
		expect(reads).toEqual([0, 250, 750, 1750, 3750]);
		expect(time.now() - dead.deadSince).toBe(3750);
	});

	test('really dead: unchanged for the settle time, then final; reads stay few', async () => {
		const time = new FakeClock(dead.deadSince + 200); // the refusal happened 200 ms ago
		let reads = 0;
		const outcome = await settleRefusal(
			dead,
			async () => {
				reads++;
				return 'fp-dead';
			},
			time,
			() => undefined,
		);
		expect(outcome).toBe('unchanged');
		expect(time.now()).toBe(dead.deadSince + 45_000);
		// the pause schedule, the last pause cut to end exactly at the settle time: 44.8 s in all
		expect(time.slept).toEqual([
			250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000, 5000, 5000, 2050,
		]);
		expect(reads).toBe(14);
	});

	test('cancellation between reads stops the wait', async () => {
		const time = new FakeClock(dead.deadSince);
		let reads = 0;
		const settling = settleRefusal(
			dead,
			async () => {
				reads++;
				return 'fp-dead';
			},
			time,
			() => {
				if (time.now() - dead.deadSince > 1000) throw new Error('cancelled');
			},
		);
		await expect(settling).rejects.toThrow('cancelled');
		expect(reads).toBe(3);
	});
});
