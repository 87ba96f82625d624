/**
 * "Recover Missed Deliveries" against the sandbox: the trigger reads its subscription's delivery
 * log and has the platform send again what failed, through n8n-core's real hook context. The
 * sandbox delivers to https://n8n.invalid/..., which it fails at once without asking DNS, so every
 * attempt fails and is logged, as when n8n is down. Waiting (the settle time between passes) runs
 * on a clock ahead of the wall clock.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import { useClock } from '../../nodes/shared/transport/clock';
import { SETTLE_MS } from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';
import { retireAllNow } from '../../nodes/LearningPlatformTrigger/subscription/retirement';
import { deliveryLogApi } from '../../nodes/LearningPlatformTrigger/recovery/host';
import {
	CHECK_JITTER_MS,
	recoverMissedDeliveries,
} from '../../nodes/LearningPlatformTrigger/recovery/run';
import { RECOVERY_REQUESTS_PER_MINUTE } from '../../nodes/LearningPlatformTrigger/recovery/pace';
import type { Redispatches } from '../../nodes/LearningPlatformTrigger/recovery/redispatchMemory';
import {
	noteRecoveryMark,
	resetRecoveryState,
	RESCAN_INTERVAL_MS,
	scheduleLoopsEnded,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { AheadClock, withAheadClock } from '../support/fakeClock';
import { hookContext, runHook } from '../support/n8n';
import {
	askedEntriesOf,
	GIVE_UP_MS,
	platformReading,
	redispatchRequestsOf,
	setUpTriggerTests,
	type TriggerTestContext,
} from './setup';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const RECOVER = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: true } };
/** redispatches a run makes before it learns of a later run in another process */
const BEFORE_SUPERSEDED = 3;
const KEEP = { event: COMPLETION_CREATED, options: { keepSubscriptionWhileInactive: true } };

jest.setTimeout(60_000);

const trigger = new LearningPlatformTrigger();
let t: TriggerTestContext;

beforeAll(async () => {
	t = await setUpTriggerTests('recovery');
});
afterAll(async () => {
	// no deletion waiting for its grace period outlives the sandbox
	await retireAllNow();
	await t.close();
});

function options(staticData: IDataObject, parameters: IDataObject, path: string) {
	return {
		parameters,
		credentials: t.credentials,
		staticData,
		webhookBaseUrl: `https://n8n.invalid/${path}`,
	};
}

/** A production subscription for this workflow (created without recovery), and its id. */
async function subscribed(path: string) {
	const staticData: IDataObject = {};
	const noRecovery = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: false } };
	await runHook(trigger, 'create', options(staticData, noRecovery, path));
	const subscriptionId = (staticData[NODE_KEY] as IDataObject).subscriptionId as number;
	return { staticData, subscriptionId };
}

/** A completion whose delivery to n8n.invalid fails; resolves once the failure is logged. */
async function missedDelivery(subscriptionId: number) {
	const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
	await t.sandbox.control.simulateCompletion({});
	await t.sandbox.control.waitForDeliveries({ subscriptionId }, before + 1, 10_000);
}

async function logOf(subscriptionId: number) {
	const { body } = await t.api('GET', `/${subscriptionId}/logs?perPage=100`);
	return body.data as Array<{ id: number; success: boolean; redispatched: boolean; tries: number }>;
}

const askedEntries = (subscriptionId: number) => askedEntriesOf(t.sandbox, subscriptionId);

/** Polls until some redispatch of the subscription's entries was asked for. */
async function someRedispatchAsked(subscriptionId: number, deadline: number): Promise<void> {
	while ((await askedEntries(subscriptionId)).length === 0) {
		if (Date.now() > deadline) throw new Error('nothing was redispatched');
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/**
 * Whether the platform shows a redispatch on its entry (`redispatched: true`): under the
 * `untouched` reading only new entries tell of it.
 */
const entryShowsRedispatch = platformReading.redispatchEntry !== 'untouched';
/** Resolves once the subscription's attempts number `total` (redispatches' included), all answered. */
/** Each missed delivery's entry among `attempts`: its last attempt's (logged per attempt or not). */
function missedEntries(attempts: Array<{ delivery_ref: number | null; log_id: number | null }>) {
	return [...new Set(attempts.map((d) => d.delivery_ref))].map(
		(ref) => attempts.filter((d) => d.delivery_ref === ref).at(-1)?.log_id,
	);
}

async function redispatchesLogged(subscriptionId: number, total: number): Promise<void> {
	await t.sandbox.control.waitForDeliveries({ subscriptionId }, total, 10_000);
}

describe('a recovery run', () => {
	test('redispatches each settled failed delivery once; a second run leaves them alone', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-settled');
		await missedDelivery(subscriptionId);
		await missedDelivery(subscriptionId);
		// missed: the platform has given up on each (its retries, if the reading has any, failed too)
		await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
		const attemptsBefore = (await t.sandbox.control.deliveries({ subscriptionId })).length;
		const context = hookContext(trigger, { ...options(staticData, RECOVER, 'recover-settled') });

		await withAheadClock(async (time) => {
			time.offset = SETTLE_MS + 1_000; // the platform has stopped retrying them
			// the process's memory of what it asked for, as the schedule passes it to each run
			const memory: Redispatches = new Map();
			const first = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				memory,
			);
			expect(first).toMatchObject({ redispatched: 2, failed: 0 });
			// the redispatches failed as well (n8n is still down), and the platform has logged them
			await redispatchesLogged(subscriptionId, attemptsBefore + 2);
			const second = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				memory,
			);
			expect(second).toMatchObject({ redispatched: 0, failed: 0 });
		});

		const originals = missedEntries(
			(await t.sandbox.control.deliveries({ subscriptionId })).slice(0, attemptsBefore),
		);
		const asked = await askedEntries(subscriptionId);
		expect(asked.slice(0, 2).sort()).toEqual([...originals].sort());
		expect(new Set(asked).size).toBe(asked.length); // no entry asked for twice
		if (entryShowsRedispatch)
			for (const entry of (await logOf(subscriptionId)).filter((e) => originals.includes(e.id)))
				expect(entry).toMatchObject({ redispatched: true });
		for (const r of await redispatchRequestsOf(t.sandbox, subscriptionId))
			expect(r.status).toBe(200);
	});

	test("a restart's ten missed deliveries take about one request each, so all go within recovery's 20 a minute", async () => {
		const { staticData, subscriptionId } = await subscribed('recover-ten');
		for (let i = 0; i < 10; i++) await missedDelivery(subscriptionId);
		const context = hookContext(trigger, { ...options(staticData, RECOVER, 'recover-ten') });
		const run = await withAheadClock(async (time) => {
			time.offset = SETTLE_MS + 1_000;
			const started = time.now();
			const tally = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
			return { ...tally, took: time.now() - started };
		});
		expect(run).toMatchObject({ redispatched: 10, failed: 0 });
		// the log's page, then each entry's page read again once for the entries that follow it
		// at once: before, a read per entry (21 requests, the last waiting for the next minute)
		expect(run.requests).toBeLessThanOrEqual(RECOVERY_REQUESTS_PER_MINUTE - 4);
		expect(run.took).toBeLessThan(60_000);
		expect(new Set(await askedEntries(subscriptionId)).size).toBe(10);
	});

	test('a run superseded by a later one in another process stops before its next redispatch; the later one redispatches the rest, each once', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-superseded');
		for (let i = 0; i < BEFORE_SUPERSEDED + 2; i++) await missedDelivery(subscriptionId);
		// missed: the platform has given up on each (its retries, if the reading has any, failed too)
		await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
		const attemptsBefore = (await t.sandbox.control.deliveries({ subscriptionId })).length;
		const context = hookContext(trigger, options(staticData, RECOVER, 'recover-superseded'));

		await withAheadClock(async (time) => {
			time.offset = SETTLE_MS + 1_000;
			// asked before the pass and before each redispatch: the later run is learnt after 3
			let asked = 0;
			const earlierMemory: Redispatches = new Map();
			const earlier = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				() => ++asked > 1 + BEFORE_SUPERSEDED,
				earlierMemory,
			);
			expect(earlier).toMatchObject({ redispatched: BEFORE_SUPERSEDED, superseded: true });
			await redispatchesLogged(subscriptionId, attemptsBefore + BEFORE_SUPERSEDED);
			// the later process knows of the earlier's redispatches from the platform's marks; where
			// the platform leaves its entries untouched, only from the memory deliveries carry
			const later = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				entryShowsRedispatch ? new Map() : earlierMemory,
			);
			expect(later).toMatchObject({ redispatched: 2, failed: 0 });
		});

		const originals = missedEntries(
			(await t.sandbox.control.deliveries({ subscriptionId })).slice(0, attemptsBefore),
		);
		const asked = await askedEntries(subscriptionId);
		expect(new Set(asked).size).toBe(asked.length); // no entry asked for twice
		expect(asked.filter((id) => originals.includes(id))).toHaveLength(BEFORE_SUPERSEDED + 2);
		if (entryShowsRedispatch)
			for (const entry of (await logOf(subscriptionId)).filter((e) => originals.includes(e.id)))
				expect(entry).toMatchObject({ redispatched: true });
	});

	test('a run that finds an entry redispatched by another run since it read the log stops there, asking for none; the other covers the rest, each once', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-taken');
		for (let i = 0; i < 4; i++) await missedDelivery(subscriptionId);
		// missed: the platform has given up on each, so no retry adds an entry while the runs look
		await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
		const originals = missedEntries(await t.sandbox.control.deliveries({ subscriptionId })).flatMap(
			(id) => (id == null ? [] : [id]),
		);
		expect(originals).toHaveLength(4);
		const context = hookContext(trigger, options(staticData, RECOVER, 'recover-taken'));
		const otherMemory: Redispatches = new Map();
		const memory: Redispatches = new Map();
		resetRecoveryState();
		let offset = SETTLE_MS + 1_000;
		let otherRan = false;
		const restore = useClock({
			now: () => Date.now() + offset,
			// the run's first short wait (its jitter; a wait for its share of the key is longer) comes
			// after its read of the log, before its first look at the oldest entry: there another
			// process's run redispatches it (and, where the platform leaves the entry untouched, a
			// delivery tells this process so through the static data)
			sleep: async (ms) => {
				if (!otherRan && ms < CHECK_JITTER_MS) {
					otherRan = true;
					const oldest = Math.min(...originals);
					expect((await t.api('POST', `/${subscriptionId}/logs/${oldest}/redispatch`)).status).toBe(
						200,
					);
					otherMemory.set(oldest, { tries: 1, at: Date.now() + offset });
					if (!entryShowsRedispatch) memory.set(oldest, { tries: 1, at: Date.now() + offset });
				}
				offset += ms;
			},
		});
		try {
			const run = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				memory,
			);
			expect(otherRan).toBe(true);
			expect(run).toMatchObject({ redispatched: 0, failed: 0, yielded: true });
			// the other run goes on with the rest
			const other = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				otherMemory,
			);
			expect(other).toMatchObject({ redispatched: originals.length - 1, failed: 0 });
		} finally {
			restore();
		}
		const asked = await askedEntries(subscriptionId);
		expect([...asked].sort()).toEqual([...originals].sort()); // each once, none left
	});

	test('an entry the platform may still be retrying waits until it settles, then goes', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-unsettled');
		await missedDelivery(subscriptionId);
		const context = hookContext(trigger, options(staticData, RECOVER, 'recover-unsettled'));
		await withAheadClock(async (time) => {
			const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
			expect(run.redispatched).toBe(1);
			// it slept through one settle time before redispatching
			expect(time.slept).toBeGreaterThanOrEqual(SETTLE_MS);
		});
	});

	test('a delivery that went through is not redispatched', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-none');
		const context = hookContext(trigger, options(staticData, RECOVER, 'recover-none'));
		await withAheadClock(async () => {
			const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
			expect(run).toEqual({ redispatched: 0, failed: 0, read: 0, requests: 1 });
		});
	});
});

describe('deactivation', () => {
	const liveSubscription = async (subscriptionId: number) =>
		(await t.sandbox.control.subscriptions(t.username)).find(
			(s) => s.id === subscriptionId && s.deleted_at === null,
		);

	test('a trigger at its defaults removes its subscription (once no activation followed within the grace period), though it recovers missed deliveries', async () => {
		const { staticData, subscriptionId } = await subscribed('defaults-deactivate');
		const atDefaults = { event: COMPLETION_CREATED };
		const deleted = await runHook(
			trigger,
			'delete',
			options(staticData, atDefaults, 'defaults-deactivate'),
		);
		expect(deleted.result).toBe(true);
		await retireAllNow();
		expect(await liveSubscription(subscriptionId)).toBeUndefined();
	});

	test('"Recover Missed Deliveries" turned on does not keep it: only "Keep Subscription While Inactive" does', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-deactivate');
		await runHook(trigger, 'delete', options(staticData, RECOVER, 'recover-deactivate'));
		await retireAllNow();
		expect(await liveSubscription(subscriptionId)).toBeUndefined();
	});

	test('"Keep Subscription While Inactive" keeps the production subscription, so the platform logs what it cannot deliver', async () => {
		const { staticData, subscriptionId } = await subscribed('keep-on-deactivate');
		const deleted = await runHook(
			trigger,
			'delete',
			options(staticData, KEEP, 'keep-on-deactivate'),
		);
		expect(deleted.result).toBe(true);
		expect((staticData[NODE_KEY] as IDataObject).subscriptionId).toBe(subscriptionId);
		const live = (await t.sandbox.control.subscriptions(t.username)).find(
			(s) => s.id === subscriptionId,
		);
		expect(live).toMatchObject({ is_enabled: true, deleted_at: null });

		await missedDelivery(subscriptionId);
		expect((await logOf(subscriptionId))[0]).toMatchObject({ success: false });
	});

	test('"Listen for test event" subscriptions are removed all the same', async () => {
		const staticData: IDataObject = {};
		const test = {
			...options(staticData, KEEP, 'keep-test'),
			isTest: true,
			mode: 'manual' as const,
		};
		await runHook(trigger, 'create', test);
		const subscriptionId = (staticData[NODE_KEY] as IDataObject).subscriptionId as number;
		await runHook(trigger, 'delete', test);
		const gone = (await t.sandbox.control.subscriptions(t.username)).find(
			(s) => s.id === subscriptionId,
		);
		expect(gone?.deleted_at).toBeTruthy();
	});
});

describe('activation', () => {
	test('of an intact subscription recovers its failed deliveries in the background (on by default)', async () => {
		const { staticData, subscriptionId } = await subscribed('recover-on-activation');
		await missedDelivery(subscriptionId);
		await withAheadClock(async (time) => {
			time.offset = SETTLE_MS + 1_000;
			const atDefaults = { event: COMPLETION_CREATED };
			const exists = await runHook(
				trigger,
				'checkExists',
				options(staticData, atDefaults, 'recover-on-activation'),
			);
			expect(exists.result).toBe(true); // activation does not wait for the recovery
			await someRedispatchAsked(subscriptionId, Date.now() + 30_000);
			const [delivery] = await t.sandbox.control.deliveries({ subscriptionId });
			expect(await askedEntries(subscriptionId)).toEqual([delivery.log_id]);
		}, RESCAN_INTERVAL_MS);
	});
});

describe('while the workflow stays active', () => {
	test('a failure logged later (the platform could not reach n8n, no new delivery comes) is redispatched by the 15-minute check; deactivation stops it', async () => {
		const { staticData, subscriptionId } = await subscribed('scheduled');
		const opts = options(staticData, RECOVER, 'scheduled');
		// the clock runs ahead at once for short waits; a 15-minute wait ends when the test says
		const time = new AheadClock();
		const gate: { release?: () => void } = {};
		const clock = {
			now: () => time.now(),
			sleep: async (ms: number) => {
				if (ms < RESCAN_INTERVAL_MS) return await time.sleep(ms);
				await new Promise<void>((resolve) => (gate.release = resolve));
				time.offset += ms;
			},
		};
		const restore = useClock(clock);
		try {
			await runHook(trigger, 'checkExists', opts);
			const deadline = Date.now() + 30_000;
			while (gate.release === undefined) {
				if (Date.now() > deadline) throw new Error('the schedule never started');
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
			await missedDelivery(subscriptionId);
			time.offset += SETTLE_MS;
			const first = gate.release as () => void;
			gate.release = undefined;
			first();
			await someRedispatchAsked(subscriptionId, deadline);
			const [delivery] = await t.sandbox.control.deliveries({ subscriptionId });
			expect(await askedEntries(subscriptionId)).toEqual([delivery.log_id]);

			await runHook(trigger, 'delete', opts);
			while (gate.release === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
			const requestsBefore = (await t.sandbox.control.requests({})).length;
			const stopped = gate.release as () => void;
			gate.release = undefined;
			stopped();
			// the stopped schedule's loop ends at this look; one that went on would check and then
			// sleep again (the gate's next release): whichever comes first decides
			let decided = false;
			const outcome = await Promise.race([
				scheduleLoopsEnded(subscriptionId).then(() => 'ended' as const),
				(async () => {
					while (gate.release === undefined && !decided)
						await new Promise((resolve) => setTimeout(resolve, 50));
					return 'went on' as const;
				})(),
			]);
			decided = true;
			expect(outcome).toBe('ended');
			// stopped: the next check read nothing
			const after = (await t.sandbox.control.requests({})).slice(requestsBefore);
			expect(after.filter((r) => r.path.includes(`/${subscriptionId}/logs`))).toEqual([]);
		} finally {
			restore();
			resetRecoveryState();
		}
	});
	test("a check leaves the run to another process that started one in the last 15 minutes, as learnt from a delivery's static data", async () => {
		const { staticData, subscriptionId } = await subscribed('scheduled-elsewhere');
		const opts = options(staticData, RECOVER, 'scheduled-elsewhere');
		const time = new AheadClock();
		const gate: { release?: () => void } = {};
		const restore = useClock({
			now: () => time.now(),
			sleep: async (ms: number) => {
				if (ms < RESCAN_INTERVAL_MS) return await time.sleep(ms);
				await new Promise<void>((resolve) => (gate.release = resolve));
				time.offset += ms;
			},
		});
		const scheduleSleeps = async () => {
			const deadline = Date.now() + 30_000;
			while (gate.release === undefined) {
				if (Date.now() > deadline) throw new Error('the schedule did not come round to sleep');
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		};
		try {
			await runHook(trigger, 'checkExists', opts);
			await scheduleSleeps();
			await missedDelivery(subscriptionId);
			// another process starts a run just before this one's check is due (a check comes at
			// most a minute after its 15 minutes), and a delivery's static data tells this process
			const elsewhere = time.now() + RESCAN_INTERVAL_MS + 60_000;
			noteRecoveryMark(
				hookContext(trigger, opts) as unknown as IWebhookFunctions,
				{ recoveryScannedAt: elsewhere },
				subscriptionId,
			);
			const requestsBefore = (await t.sandbox.control.requests({})).length;
			const check = gate.release as () => void;
			gate.release = undefined;
			check();
			// the marker: the schedule has come round to sleep again after this check
			await scheduleSleeps();
			const after = (await t.sandbox.control.requests({})).slice(requestsBefore);
			expect(after.filter((r) => r.path.includes(`/${subscriptionId}/logs`))).toEqual([]);
			expect((await logOf(subscriptionId))[0]).toMatchObject({ success: false });
			expect(await askedEntries(subscriptionId)).toEqual([]);
			await runHook(trigger, 'delete', opts);
		} finally {
			restore();
			resetRecoveryState();
		}
	});
});
