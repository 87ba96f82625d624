// When recovery runs (run.ts) and how the n8n processes serving one webhook agree on it:
// after activation, from deliveries, and on each process's 15-minute schedule. The story, with
// what it does not guarantee: docs/design.md, "Missed deliveries".
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { clock, statusOf, type ListPage } from '../../shared/transport';
import { recoveryHost, scopeOf, type RecoveryHost, type RecoveryLog } from './host';
import { recoveryTurn, resetRecoveryPace } from './pace';
import { newestLogPage } from './logReading';
import { redispatchesOf, resetRedispatchMemory, shareRedispatches } from './redispatchMemory';
import { sendRedispatchNote } from './redispatchNote';
import { recoverMissedDeliveries, type ReachQuestion, type RunTally } from './run';
import { forgetEveryScope, recoveryOf, type Schedule, type ScopeRecovery } from './scopeRecovery';
import { readField, writeField } from '../staticData';

// Process-wide besides each scope's record (scopeRecovery.ts). `resetRecoveryState` resets it for
// tests.
/** the schedules' loops (with their subscription) until each ends; read by tests only */
const loops = new Map<Promise<void>, number>();
/** when this process started (n8n may load the node's code only at its first delivery) */
let processStartedAt = Math.floor(performance.timeOrigin);

/** For tests: forgets every run and stops every schedule, as a process started at `startedAt`. */
export function resetRecoveryState(startedAt = clock().now()): void {
	resetRedispatchMemory();
	resetRecoveryPace();
	forgetEveryScope();
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
/** The platform showed this recently that it reaches the webhook: a run need not ask. */
const REACHED_RECENTLY_MS = 60_000;

function logRun(log: RecoveryLog, why: string, run: RunTally, note?: string): void {
	const summary = `${run.redispatched} redispatched, ${run.failed} not redispatched (declined or failed), ${run.read} log entries read, ${run.requests} requests${note ? `; note to the other n8n processes ${note}` : ''}${run.superseded ? '; stopped: a run started later in another n8n process covers the rest' : ''}${run.yielded ? '; stopped: another run (another n8n process, or a person) is redispatching the same entries, the next run here looks again' : ''}${run.unfinished ? '; stopped at its limits: the next run goes on' : ''}${run.unreachable ? '; stopped: a redispatch failed before and the platform still cannot reach this webhook (a sample it sent failed), so each check asks again, once, until it can' : ''}`;
	log.info(`Learning Platform Trigger: missed deliveries (${why}): ${summary}`);
}

function logFailure(log: RecoveryLog, why: string, error: unknown): void {
	log.warn(
		`Learning Platform Trigger: could not recover missed deliveries (${why}): ${(error as Error).message}`,
	);
}

/**
 * Every delivery that passed the checks: this process learns which recovery runs other processes
 * started, from the static data n8n loaded for it.
 */
export function noteRecoveryMark(
	context: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const scope = scopeOf(context);
	recoveryOf(scope).learnMark(staticData);
	recoveryOf(scope).shareJudged(staticData, subscriptionId, false);
	shareRedispatches(scope, staticData, subscriptionId, clock().now(), false);
}

/**
 * A run, unless one is under way here. A run with a `mark` stops once it is superseded; one with
 * `pagesJustRead` (the log pages a check read to decide on it) does not read them again.
 */
async function runOnce(
	host: RecoveryHost,
	subscriptionId: number,
	why: string,
	mark?: number,
	pagesJustRead?: Map<number, ListPage>,
): Promise<void> {
	const recovery = recoveryOf(host.scope);
	if (!recovery.claimRun(clock().now())) return;
	recovery.running = true;
	// with the end's line (logRun, logFailure), an operator sees a run still under way
	host.log.info(`Learning Platform Trigger: looking for missed deliveries (${why})`);
	try {
		const superseded = () => mark !== undefined && recovery.superseded(mark);
		const asked = redispatchesOf(host.scope, subscriptionId);
		const run = await recoverMissedDeliveries(host.api, subscriptionId, superseded, asked, {
			reaches: reachQuestion(host, recovery),
			judgedUpTo: recovery.unfinished ? undefined : recovery.judgedUpTo(subscriptionId),
			lastPage: recovery.lastLogPage,
			pagesJustRead,
		});
		recovery.lastLogPage = run.lastPage;
		// a run that gave way to another is judged again by the next, however the newest page looks
		recovery.unfinished = run.unfinished === true || run.yielded === true;
		if (run.judgedUpTo !== undefined) recovery.judge(subscriptionId, run.judgedUpTo);
		const note =
			run.redispatched + run.failed > 0
				? await sendRedispatchNote(host, subscriptionId)
				: undefined;
		logRun(host.log, why, run, note);
	} catch (error) {
		logFailure(host.log, why, error);
	} finally {
		recovery.running = false;
	}
}

/**
 * The question a run asks before it redispatches again after a failed redispatch, with what the
 * answer teaches this process; none when the platform showed a moment ago that it reaches n8n (a
 * delivery, or a yes to the schedule's own question just before the run) or n8n has no URL to ask
 * about.
 */
function reachQuestion(host: RecoveryHost, recovery: ScopeRecovery): ReachQuestion | undefined {
	const url = host.webhook.url();
	if (url === undefined || clock().now() - recovery.reachableAt < REACHED_RECENTLY_MS)
		return undefined;
	return async () => {
		const reached = await host.api.reaches(url);
		recovery.noteReach(reached, clock().now());
		return reached;
	};
}

/**
 * A check while the platform cannot reach the webhook: one question (a turn of recovery's share),
 * no log read. True once it reaches it again (or the answer does not tell): a run is due.
 */
async function reachesAgain(host: RecoveryHost, recovery: ScopeRecovery): Promise<boolean> {
	const ask = reachQuestion(host, recovery);
	if (ask === undefined) return true;
	await recoveryTurn(async () => await host.api.keyUse());
	return (await ask()) !== false;
}

/**
 * Every RESCAN_INTERVAL_MS while the workflow is active (its webhook does not answer 404), a run
 * when the newest log entries show a failure (or the last run here stopped at its cap) and no run
 * started meanwhile, here or in another process as far as this one has learnt (the marks in the
 * deliveries' static data, as delivery-started runs agree): missed deliveries arrive even when no
 * new delivery comes to set a run off (the platform could not reach n8n while n8n kept running).
 * One schedule per scope in a process: a later one stops this one.
 */
function keepRecovering(host: RecoveryHost, subscriptionId: number): void {
	const recovery = recoveryOf(host.scope);
	recovery.endSchedule();
	const schedule: Schedule = { subscriptionId, stopped: false };
	recovery.schedule = schedule;
	const url = host.webhook.url() ?? '';
	const why = 'scheduled';
	const loop = (async () => {
		while (!schedule.stopped) {
			await clock().sleep(RESCAN_INTERVAL_MS + Math.floor(Math.random() * SCHEDULE_JITTER_MS));
			if (schedule.stopped) return;
			if ((await host.webhook.probe(url)) === 404) break;
			if (clock().now() - recovery.lastRunKnown() < RESCAN_INTERVAL_MS) continue;
			try {
				if (recovery.unreachable) {
					if (await reachesAgain(host, recovery))
						await runOnce(host, subscriptionId, 'the platform reaches n8n again');
					continue;
				}
				// with the log judged up to an entry, a run reads only the newer ones: as cheap as a look
				const pages = new Map<number, ListPage>();
				const newest =
					recovery.unfinished || recovery.judgedUpTo(subscriptionId) !== undefined
						? undefined
						: await newestLogPage(async (number) => {
								const page = await host.api.logPage(subscriptionId, number);
								pages.set(number, page);
								return page;
							});
				if (!newest || newest.some((entry) => entry.success === false))
					await runOnce(host, subscriptionId, why, undefined, pages);
			} catch (error) {
				if (statusOf(error) === 404) break; // the subscription is gone: replaced or deleted
				// the platform's API unreachable for now: the next check tries again
				logFailure(host.log, why, error);
			}
		}
		if (!schedule.stopped) recovery.endSchedule();
	})()
		.catch((error: unknown) => {
			if (!schedule.stopped) recovery.endSchedule();
			logFailure(host.log, why, error);
		})
		.finally(() => loops.delete(loop));
	loops.set(loop, subscriptionId);
}

/** Deactivation: this process's schedule for the workflow stops. */
export function stopRecovering(context: IHookFunctions): void {
	recoveryOf(scopeOf(context)).endSchedule();
}

/**
 * On activation, once the webhook answers, in the background (activation does not wait); then on
 * schedule. Marks the run in `staticData` (n8n saves it after activation), so the deliveries
 * that follow at once start no second run in another process.
 */
export function recoverAfterActivation(
	context: IHookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const host = recoveryHost(context);
	const mark = clock().now();
	recoveryOf(host.scope).markRun(staticData, mark);
	recoveryOf(host.scope).shareJudged(staticData, subscriptionId, true);
	shareRedispatches(host.scope, staticData, subscriptionId, mark, true);
	const url = host.webhook.url() ?? '';
	void (async () => {
		await host.webhook.live(url);
		await runOnce(host, subscriptionId, 'after activation', mark);
		keepRecovering(host, subscriptionId);
	})().catch((error: unknown) => logFailure(host.log, 'after activation', error));
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
	context: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
	redispatch: boolean,
): void {
	const scope = scopeOf(context);
	const recovery = recoveryOf(scope);
	const now = clock().now();
	recovery.noteReach(true, now);
	const newest = recovery.learnMark(staticData);
	// n8n saves `staticData` with this delivery: never with an older mark or less memory than
	// this process has
	if (newest > Number(readField(staticData, 'recoveryScannedAt') ?? -Infinity))
		writeField(staticData, 'recoveryScannedAt', newest);
	recovery.shareJudged(staticData, subscriptionId, true);
	shareRedispatches(scope, staticData, subscriptionId, now, true);
	if (redispatch) return;
	const ranEver = Number.isFinite(newest);
	// this process's own scheduled runs count too: they leave no mark in the static data (nothing
	// saves it then), and a delivery just after one would read the log again for nothing
	const due = !ranEver || now - recovery.lastRunKnown() >= RESCAN_INTERVAL_MS;
	const startedSinceProcessStart = ranEver && newest >= processStartedAt;
	const firstRunHereSinceStart =
		recovery.lastRunHere === undefined &&
		recovery.schedule === undefined &&
		!startedSinceProcessStart;
	if (!due && !firstRunHereSinceStart) return;
	if (!recovery.claimRun(now)) return;
	recovery.markRun(staticData, now);
	// the host only for a run: most deliveries start none
	const host = recoveryHost(context);
	void (async () => {
		await clock().sleep(START_DELAY_MS + Math.floor(Math.random() * START_JITTER_MS));
		await runOnce(host, subscriptionId, 'found from a delivery', now);
		if (recovery.schedule?.subscriptionId !== subscriptionId) keepRecovering(host, subscriptionId);
	})().catch((error: unknown) => logFailure(host.log, 'found from a delivery', error));
}
