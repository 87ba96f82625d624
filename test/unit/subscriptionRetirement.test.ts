// The grace period between n8n's `delete` of the trigger and the activation that may follow
// (nodes/LearningPlatformTrigger/subscription/retirement.ts), on a clock the test ends by hand.
import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import { useClock } from '../../nodes/shared/transport/clock';
import {
	holdingRetirement,
	RETIREMENT_GRACE_MS,
	retireAllNow,
	retireLater,
	retirementPending,
	settleRetirement,
} from '../../nodes/LearningPlatformTrigger/subscription/retirement';

/** A clock whose waits end when the test says so (or when aborted). */
function handClock() {
	const waits: Array<{ ms: number; end: () => void }> = [];
	const restore = useClock({
		now: () => Date.now(),
		sleep: async (ms, signal) =>
			await new Promise<void>((resolve, reject) => {
				waits.push({ ms, end: resolve });
				signal?.addEventListener('abort', () => reject(new Error('aborted')));
			}),
	});
	return { waits, restore };
}

const turn = async () => await new Promise((resolve) => setImmediate(resolve));

describe('subscription retirement', () => {
	let clock: ReturnType<typeof handClock>;
	beforeEach(() => (clock = handClock()));
	afterEach(async () => {
		await retireAllNow();
		clock.restore();
	});

	test('with no activation, the subscription is retired when the grace period ends, not before', async () => {
		const retired: number[] = [];
		retireLater('wf:node', 7, async () => void retired.push(7));
		await turn();
		expect(clock.waits.map((w) => w.ms)).toEqual([RETIREMENT_GRACE_MS]);
		expect(retired).toEqual([]);
		expect(retirementPending()).toBe(true);
		clock.waits[0].end();
		await turn();
		expect(retired).toEqual([7]);
		expect(retirementPending()).toBe(false);
	});

	test('an activation that uses the same subscription keeps it: never retired, even when the wait ends', async () => {
		const retired: number[] = [];
		retireLater('wf:node', 7, async () => void retired.push(7));
		await settleRetirement('wf:node', 7);
		clock.waits[0]?.end();
		await turn();
		expect(retired).toEqual([]);
		expect(retirementPending()).toBe(false);
	});

	test('an activation that registered another subscription retires the old one at once', async () => {
		const retired: number[] = [];
		retireLater('wf:node', 7, async () => void retired.push(7));
		await settleRetirement('wf:node', 8);
		expect(retired).toEqual([7]);
		clock.waits[0]?.end();
		await turn();
		expect(retired).toEqual([7]);
	});

	test("another trigger's activation does not touch it; a failing retirement is swallowed", async () => {
		const retired: string[] = [];
		retireLater('wf:a', 1, async () => void retired.push('a'));
		retireLater('wf:b', 2, async () => {
			throw new Error('platform unreachable');
		});
		await settleRetirement('wf:c', 3);
		expect(retired).toEqual([]);
		await retireAllNow();
		expect(retired).toEqual(['a']);
		expect(retirementPending()).toBe(false);
	});

	describe('an activation looking at its subscription holds the retirement', () => {
		// what holdingRetirement reads of n8n's hook context: the trigger's scope and static data
		const hookContext = (staticData: IDataObject) =>
			({
				getWorkflow: () => ({ id: 'wf' }),
				getNode: () => ({ id: 'node' }),
				getWorkflowStaticData: () => staticData,
			}) as unknown as IHookFunctions;

		test('the grace period ending during the look retires nothing; the look then keeps the subscription it found', async () => {
			const retired: number[] = [];
			retireLater('wf:node', 7, async () => void retired.push(7));
			await turn();
			let lookDone!: (exists: boolean) => void;
			const looking = holdingRetirement.call(
				hookContext({ subscriptionId: 7 }),
				async () => await new Promise<boolean>((resolve) => (lookDone = resolve)),
			);
			// the grace period's wait ends while the look is under way (n8n ~10 s after its teardown)
			clock.waits[0].end();
			await turn();
			expect(retired).toEqual([]);
			lookDone(true);
			expect(await looking).toBe(true);
			await retireAllNow();
			expect(retired).toEqual([]);
			expect(retirementPending()).toBe(false);
		});

		test('a look that ends with another subscription in static data retires the old one at once', async () => {
			const retired: number[] = [];
			retireLater('wf:node', 7, async () => void retired.push(7));
			const staticData: IDataObject = { subscriptionId: 7 };
			const exists = await holdingRetirement.call(hookContext(staticData), async () => {
				delete staticData.subscriptionId; // the platform said 404: forgotten
				return false;
			});
			expect(exists).toBe(false);
			expect(retired).toEqual([7]);
			expect(retirementPending()).toBe(false);
		});

		test('a look that fails (n8n tries the activation again) gives the retirement a new grace period', async () => {
			const retired: number[] = [];
			retireLater('wf:node', 7, async () => void retired.push(7));
			await turn();
			await expect(
				holdingRetirement.call(hookContext({ subscriptionId: 7 }), async () => {
					throw new Error('the platform is unreachable');
				}),
			).rejects.toThrow('the platform is unreachable');
			expect(retired).toEqual([]);
			expect(retirementPending()).toBe(true);
			await turn();
			clock.waits.at(-1)!.end();
			await turn();
			expect(retired).toEqual([7]);
		});
	});
});
