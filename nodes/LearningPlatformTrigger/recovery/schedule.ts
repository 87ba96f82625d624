// When recovery runs (recoveryRun.ts) and how the n8n processes serving one webhook agree on it:
// after activation, from deliveries, and on each process's 15-minute schedule. The story, with
// what it does not guarantee: docs/design.md, "Missed deliveries".
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { clock, listPage, statusOf } from '../../shared/transport';
import { resetRecoveryPace } from './pace';
import { recoverMissedDeliveries, type RecoveryRun } from './run';
import { redispatchesOf, resetRedispatchMemory, shareRedispatches } from './redispatchMemory';
import { sendRedispatchNote } from './redispatchNote';
import { readField, writeField } from '../staticData';
import { triggerScope } from '../triggerScope';
import { probeWebhook, webhookLive } from '../subscription';

interface Schedule {
	subscriptionId: number;
	/** set when it is replaced, stopped or reset: its loop ends at its next look */
	stopped: boolean;
}

// Process-wide state, per workflow and node (`scope`). `resetRecoveryState` clears it for tests.
/** the runs under way in this process */
const running = new Set<string>();
/** when a run here last started, or a delivery reserved one (written by `claimRun` only) */
const lastRunHere = new Map<string, number>();
/** scopes whose last run here stopped at a run's limits (recoveryRun.ts): the next goes on at once */
const unfinished = new Set<string>();
/** this process's schedule per scope (`keepRecovering`) */
const schedules = new Map<string, Schedule>();
/** the newest run mark (`recoveryScannedAt`) seen here, loaded or written */
const newestMark = new Map<string, number>();
/** the mark of this process's own latest run */
const ownMark = new Map<string, number>();
/** the schedules' loops (with their subscription) until each ends; read by tests only */
const loops = new Map<Promise<void>, number>();
/** when this process started (n8n may load the node's code only at its first delivery) */
let processStartedAt = Math.floor(performance.timeOrigin);

/** For tests: forgets every run and stops every schedule, as a process started at `startedAt`. */
export function resetRecoveryState(startedAt = clock().now()): void {
	resetRedispatchMemory();
	resetRecoveryPace();
	running.clear();
	lastRunHere.clear();
	unfinished.clear();
	for (const schedule of schedules.values()) schedule.stopped = true;
	schedules.clear();
	newestMark.clear();
	ownMark.clear();
	processStartedAt = startedAt;
}

/**
 * For tests: resolves once every schedule loop under way now for `subscriptionId` has ended (a
 * stopped schedule's loop ends at its next look, after its sleep). Nothing shipped waits on it.
 */
export async function scheduleLoopsEnded(subscriptionId: number): Promise<void> {
	await Promise.all([...loops].filter(([, id]) => id === subscriptionId).map(([loop]) => loop));
}

/** Runs at most this often per workflow from deliveries, and a process's schedule checks this often. */
export const RESCAN_INTERVAL_MS = 15 * 60_000;
const SCHEDULE_JITTER_MS = 60_000;
/**
 * A run set off by a delivery starts this long after it, plus up to START_JITTER_MS: processes
 * that start together do not all read the log at the same moment, and a run started just before
 * in another process has time to learn of this one and stop.
 */
export const START_DELAY_MS = 2_000;
export const START_JITTER_MS = 3_000;

type Context = IHookFunctions | IWebhookFunctions;

function logRun(this: Context, why: string, run: RecoveryRun, note?: string): void {
	const summary = `${run.redispatched} redispatched, ${run.failed} not redispatched (declined or failed), ${run.read} log entries read, ${run.requests} requests${note ? `; note to the other n8n processes ${note}` : ''}${run.superseded ? '; stopped: a run started later in another n8n process covers the rest' : ''}${run.yielded ? '; stopped: another run (another n8n process, or a person) is redispatching the same entries, the next run here looks again' : ''}${run.unfinished ? '; stopped at its limits: the next run goes on' : ''}`;
	this.logger.info(`Learning Platform Trigger: missed deliveries (${why}): ${summary}`, {
		workflowId: this.getWorkflow().id,
	});
}

function logFailure(this: Context, why: string, error: unknown): void {
	this.logger.warn(
		`Learning Platform Trigger: could not recover missed deliveries (${why}): ${(error as Error).message}`,
		{ workflowId: this.getWorkflow().id },
	);
}

/**
 * The newest run mark known here for `scope`, after taking in the one `staticData` holds: kept,
 * because another process's whole-field save can take a newer mark back.
 */
function learnMark(scope: string, staticData: IDataObject): number {
	const loaded = Number(readField(staticData, 'recoveryScannedAt'));
	const known = newestMark.get(scope) ?? -Infinity;
	if (Number.isFinite(loaded) && loaded > known) {
		newestMark.set(scope, loaded);
		return loaded;
	}
	return known;
}

function markRun(scope: string, staticData: IDataObject, at: number): void {
	writeField(staticData, 'recoveryScannedAt', at);
	newestMark.set(scope, at);
	ownMark.set(scope, at);
}

/**
 * Whether another process has started a run after the one of this process marked `mark`: that
 * later run read the log afresh and covers the rest, so this one stops.
 */
function supersededRun(scope: string, mark: number): boolean {
	const newest = newestMark.get(scope) ?? -Infinity;
	return newest > mark && newest !== ownMark.get(scope);
}

/**
 * Every delivery that passed the checks: this process learns which recovery runs other processes
 * started, from the static data n8n loaded for it.
 */
export function noteRecoveryMark(
	this: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const scope = triggerScope.call(this);
	learnMark(scope, staticData);
	shareRedispatches(scope, staticData, subscriptionId, clock().now(), false);
}

/**
 * One run at a time per scope in this process: false while one is under way here (it covers this
 * one). Otherwise `at` becomes the last run here, which the schedule counts from: a run starting
 * now, or one a delivery reserves to start after its delay.
 */
function claimRun(scope: string, at: number): boolean {
	if (running.has(scope)) return false;
	lastRunHere.set(scope, at);
	return true;
}

/** A run, unless one is under way here. A run with a `mark` stops once it is superseded. */
async function runOnce(
	this: Context,
	subscriptionId: number,
	why: string,
	mark?: number,
): Promise<void> {
	const scope = triggerScope.call(this);
	if (!claimRun(scope, clock().now())) return;
	running.add(scope);
	// with the end's line (logRun, logFailure), an operator sees a run still under way
	this.logger.info(`Learning Platform Trigger: looking for missed deliveries (${why})`, {
		workflowId: this.getWorkflow().id,
	});
	try {
		const superseded = () => mark !== undefined && supersededRun(scope, mark);
		const asked = redispatchesOf(scope, subscriptionId);
		const run = await recoverMissedDeliveries.call(this, subscriptionId, superseded, asked);
		// a run that gave way to another is judged again by the next, however the newest page looks
		if (run.unfinished || run.yielded) unfinished.add(scope);
		else unfinished.delete(scope);
		const note =
			run.redispatched + run.failed > 0
				? await sendRedispatchNote.call(this, subscriptionId)
				: undefined;
		logRun.call(this, why, run, note);
	} catch (error) {
		logFailure.call(this, why, error);
	} finally {
		running.delete(scope);
	}
}

/** Stops this process's schedule for `scope`, if it has one. */
function endSchedule(scope: string): void {
	const schedule = schedules.get(scope);
	if (schedule) schedule.stopped = true;
	schedules.delete(scope);
}

/**
 * Every RESCAN_INTERVAL_MS while the workflow is active (its webhook does not answer 404), a run
 * when the newest log entries show a failure (or the last run here stopped at its cap) and no run
 * started meanwhile, here or in another process as far as this one has learnt (the marks in the
 * deliveries' static data, as delivery-started runs agree): missed deliveries arrive even when no
 * new delivery comes to set a run off (the platform could not reach n8n while n8n kept running).
 * One schedule per scope in a process: a later one stops this one.
 */
function keepRecovering(this: Context, subscriptionId: number): void {
	const scope = triggerScope.call(this);
	endSchedule(scope);
	const schedule: Schedule = { subscriptionId, stopped: false };
	schedules.set(scope, schedule);
	const url = this.getNodeWebhookUrl('default') ?? '';
	const why = 'scheduled';
	const loop = (async () => {
		while (!schedule.stopped) {
			await clock().sleep(RESCAN_INTERVAL_MS + Math.floor(Math.random() * SCHEDULE_JITTER_MS));
			if (schedule.stopped) return;
			if ((await probeWebhook.call(this, url)) === 404) break;
			// a run here, or one another process started as learnt from the deliveries' static data
			const lastRun = Math.max(
				lastRunHere.get(scope) ?? -Infinity,
				newestMark.get(scope) ?? -Infinity,
			);
			if (clock().now() - lastRun < RESCAN_INTERVAL_MS) continue;
			try {
				const newest = unfinished.has(scope)
					? undefined
					: await listPage.call(this, `/${subscriptionId}/logs`, 1);
				if (!newest || newest.items.some((entry) => entry.success === false))
					await runOnce.call(this, subscriptionId, why);
			} catch (error) {
				if (statusOf(error) === 404) break; // the subscription is gone: replaced or deleted
				// the platform's API unreachable for now: the next check tries again
				logFailure.call(this, why, error);
			}
		}
		if (!schedule.stopped) endSchedule(scope);
	})()
		.catch((error: unknown) => {
			if (!schedule.stopped) endSchedule(scope);
			logFailure.call(this, why, error);
		})
		.finally(() => loops.delete(loop));
	loops.set(loop, subscriptionId);
}

/** Deactivation: this process's schedule for the workflow stops. */
export function stopRecovering(this: IHookFunctions): void {
	endSchedule(triggerScope.call(this));
}

/**
 * On activation, once the webhook answers, in the background (activation does not wait); then on
 * schedule. Marks the run in `staticData` (n8n saves it after activation), so the deliveries
 * that follow at once start no second run in another process.
 */
export function recoverAfterActivation(
	this: IHookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const mark = clock().now();
	const scope = triggerScope.call(this);
	markRun(scope, staticData, mark);
	shareRedispatches(scope, staticData, subscriptionId, mark, true);
	const url = this.getNodeWebhookUrl('default') ?? '';
	void (async () => {
		await webhookLive.call(this, url);
		await runOnce.call(this, subscriptionId, 'after activation', mark);
		keepRecovering.call(this, subscriptionId);
	})().catch((error: unknown) => logFailure.call(this, 'after activation', error));
}

/**
 * From a delivery, in the background (the delivery is not delayed), then on this process's
 * schedule: a run when one is due (none started by any process for RESCAN_INTERVAL_MS), or when
 * it is the first run here since this process started and no process has started one since (n8n
 * 2.x calls no trigger method at start-up, so deliveries missed while n8n was down are found here;
 * processes restarted together leave it to whichever got a delivery first). Never from a
 * `redispatch` (a delivery with a `delivery_id`): a run in another process is sending it, and may
 * not have been learnt of here yet; a second run would ask for the same entries.
 */
export function recoverFromDelivery(
	this: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
	redispatch: boolean,
): void {
	const scope = triggerScope.call(this);
	const now = clock().now();
	const newest = learnMark(scope, staticData);
	// n8n saves `staticData` with this delivery: never with an older mark or less memory than
	// this process has
	if (newest > Number(readField(staticData, 'recoveryScannedAt') ?? -Infinity))
		writeField(staticData, 'recoveryScannedAt', newest);
	shareRedispatches(scope, staticData, subscriptionId, now, true);
	if (redispatch) return;
	const ranEver = Number.isFinite(newest);
	const due = !ranEver || now - newest >= RESCAN_INTERVAL_MS;
	const startedSinceProcessStart = ranEver && newest >= processStartedAt;
	const firstRunHereSinceStart =
		!lastRunHere.has(scope) && !schedules.has(scope) && !startedSinceProcessStart;
	if (!due && !firstRunHereSinceStart) return;
	if (!claimRun(scope, now)) return;
	markRun(scope, staticData, now);
	void (async () => {
		await clock().sleep(START_DELAY_MS + Math.floor(Math.random() * START_JITTER_MS));
		await runOnce.call(this, subscriptionId, 'found from a delivery', now);
		if (schedules.get(scope)?.subscriptionId !== subscriptionId)
			keepRecovering.call(this, subscriptionId);
	})().catch((error: unknown) => logFailure.call(this, 'found from a delivery', error));
}
