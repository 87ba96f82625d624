import { useClock } from '../../nodes/shared/transport/clock';
import {
	recoveryTurn,
	resetRecoveryPace,
	RECOVERY_REQUESTS_PER_MINUTE,
} from '../../nodes/LearningPlatformTrigger/recovery/pace';
import { FakeClock } from '../support/fakeClock';

let time: FakeClock;
let restore: () => void;
beforeEach(() => {
	time = new FakeClock(5_000_000);
	restore = useClock(time);
	resetRecoveryPace();
});
afterEach(() => restore());

test('recovery takes a third of the 60 requests a minute: 20 at once, then one as each leaves the minute', async () => {
	expect(RECOVERY_REQUESTS_PER_MINUTE).toBe(20);
	const startedAt: number[] = [];
	for (let i = 0; i < 45; i++) {
		await recoveryTurn();
		startedAt.push(time.now() - 5_000_000);
	}
	expect(startedAt.slice(0, 20)).toEqual(Array(20).fill(0));
	expect(startedAt.slice(20, 40)).toEqual(Array(20).fill(60_000));
	expect(startedAt.slice(40)).toEqual(Array(5).fill(120_000));
	// in any 60 seconds, at most 20
	for (let i = 0; i + 20 < startedAt.length; i++)
		expect(startedAt[i + 20] - startedAt[i]).toBeGreaterThanOrEqual(60_000);
});

test('requests spread over time are not held back', async () => {
	for (let i = 0; i < 40; i++) {
		await recoveryTurn();
		await time.sleep(3_000);
	}
	// each sleep above is the test's own: recovery never waited
	expect(time.slept).toEqual(Array(40).fill(3_000));
});
