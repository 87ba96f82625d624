// "Recover Missed Deliveries": deliveries of the trigger's own subscription that the platform
// could not make (n8n down or unreachable, the workflow inactive) are redispatched, so each
// arrives again and, recognised by the delivery ledger, starts exactly one execution. Which
// entries, when, how many, and why: docs/design.md, "Missed deliveries".
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { apiRequest, clock, listPage, readList, statusOf } from '../shared/transport';

/** How far back failed deliveries are redispatched (the delivery ledger remembers longer). */
export const RECOVERY_HORIZON_MS = 24 * 60 * 60_000;
export const MAX_REDISPATCHES_PER_RUN = 100;
export const MAX_LOG_ENTRIES_READ = 2_000;
/** An entry changed this recently may still be retried by the platform itself. */
export const SETTLE_MS = 30_000;
/** A redispatch that failed again is tried again after this long. */
export const REDISPATCH_AGAIN_AFTER_MS = 10 * 60_000;
/** Redispatches sent on one fresh look at the log (read again before each batch). */
export const REDISPATCH_BATCH = 5;
/** An attempt logged up to this long before the previous attempt's answer still follows it. */
const LOG_TIME_TOLERANCE_MS = 1_000;
/** A run looks again, SETTLE_MS apart, while entries were still settling. */
const PASSES = 3;
/** How long activation's run waits for the webhook to answer before redispatching anyway. */
const WEBHOOK_LIVE_WAIT_MS = 120_000;
const PROBE_INTERVAL_MS = 2_000;
/** Probes in a row without any answer after which the URL is taken as unreachable from n8n. */
const UNREACHABLE_PROBES = 3;

export interface DeliveryLogEntry {
	id: number;
	event_type?: string;
	delivery_id?: string;
	success?: boolean;
	tries?: number;
	status_code?: number | null;
	redispatched?: boolean;
	created_at?: string;
	updated_at?: string;
}

export type Verdict = 'redispatch' | 'unsettled' | 'skip';

/** What to do with one entry that stands for a delivery the platform gave up on, at `now`. Pure. */
export function verdictOf(entry: DeliveryLogEntry, now: number): Verdict {
	if (entry.success !== false) return 'skip';
	const created = Date.parse(entry.created_at ?? '');
	const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
	if (!Number.isFinite(created) || !Number.isFinite(updated)) return 'skip';
	if (now - created > RECOVERY_HORIZON_MS) return 'skip';
	if (now - updated < SETTLE_MS) return 'unsettled';
	if (entry.redispatched === true && now - updated < REDISPATCH_AGAIN_AFTER_MS) return 'skip';
	return 'redispatch';
}

interface Timed {
	entry: DeliveryLogEntry;
	created: number;
	updated: number;
}

/**
 * The failed entries that are the last word on their delivery, so that each delivery the platform
 * could not make is redispatched once under either reading of the log (one entry per delivery
 * counting `tries`, or one entry per attempt, `tries` being its number). An entry is not the last
 * word when
 * - a later attempt continues it: an entry of the same event with `tries` one higher, logged
 *   after it was answered (one entry per attempt; each continuing entry takes one, the nearest);
 * - a redispatch of it went on as entries of their own: a later entry has its `delivery_id`.
 * Pure; entries in any order, each named once however often it is given.
 */
export function lastWords(entries: DeliveryLogEntry[]): DeliveryLogEntry[] {
	const timed: Timed[] = [];
	const seen = new Set<number>();
	for (const entry of entries) {
		if (seen.has(entry.id)) continue;
		seen.add(entry.id);
		const created = Date.parse(entry.created_at ?? '');
		const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
		if (Number.isFinite(created) && Number.isFinite(updated))
			timed.push({ entry, created, updated });
	}
	timed.sort((a, b) => a.created - b.created || a.entry.id - b.entry.id);
	const continued = new Set<number>();
	const newestOfRedispatch = new Map<string, Timed>();
	for (const [index, later] of timed.entries()) {
		const deliveryId = later.entry.delivery_id ?? '';
		if (deliveryId !== '') {
			const known = newestOfRedispatch.get(deliveryId);
			if (known) continued.add(known.entry.id);
			newestOfRedispatch.set(deliveryId, later);
		}
		const tries = later.entry.tries ?? 0;
		if (tries < 2) continue;
		for (let i = index - 1; i >= 0; i--) {
			const earlier = timed[i];
			if (
				earlier.entry.success === false &&
				earlier.entry.tries === tries - 1 &&
				earlier.entry.event_type === later.entry.event_type &&
				earlier.updated <= later.created + LOG_TIME_TOLERANCE_MS &&
				!continued.has(earlier.entry.id)
			) {
				continued.add(earlier.entry.id);
				break;
			}
		}
	}
	return timed
		.filter(({ entry }) => entry.success === false && !continued.has(entry.id))
		.map(({ entry }) => entry);
}

export interface RecoveryRun {
	redispatched: number;
	/** redispatches the platform declined or that failed */
	failed: number;
	read: number;
	/** the run stopped early: another process started one after it, which covers the rest */
	superseded?: boolean;
}

type Context = IHookFunctions | IWebhookFunctions;

/**
 * The subscription's log back to the horizon or the most a run reads, each entry once: entries
 * logged while the run reads push older ones onto the next page, where they come again.
 */
async function readLog(this: Context, subscriptionId: number): Promise<DeliveryLogEntry[]> {
	const now = clock().now();
	const entries = new Map<number, DeliveryLogEntry>();
	await readList.call(this, `/${subscriptionId}/logs`, (page) => {
		let withinHorizon = 0;
		for (const entry of page as unknown as DeliveryLogEntry[]) {
			entries.set(entry.id, entry);
			const created = Date.parse(entry.created_at ?? '');
			if (Number.isNaN(created) || now - created <= RECOVERY_HORIZON_MS) withinHorizon++;
		}
		// newest first: a page wholly beyond the horizon ends the search
		return entries.size >= MAX_LOG_ENTRIES_READ || withinHorizon === 0;
	});
	return [...entries.values()];
}

/**
 * The current state of `ids`, read again from the newest entries down until all are seen: what
 * another run (in another process) redispatched meanwhile shows as changed.
 */
async function currentState(
	this: Context,
	subscriptionId: number,
	ids: Set<number>,
): Promise<Map<number, DeliveryLogEntry>> {
	const found = new Map<number, DeliveryLogEntry>();
	await readList.call(this, `/${subscriptionId}/logs`, (page) => {
		for (const entry of page as unknown as DeliveryLogEntry[])
			if (ids.has(entry.id)) found.set(entry.id, entry);
		return found.size === ids.size;
	});
	return found;
}

const unchanged = (seen: DeliveryLogEntry, now?: DeliveryLogEntry) =>
	now !== undefined &&
	now.redispatched === seen.redispatched &&
	now.delivery_id === seen.delivery_id &&
	now.updated_at === seen.updated_at;

/**
 * One recovery run: reads the subscription's delivery log and redispatches the deliveries the
 * platform could not make, one after another, a few at a time, each checked against the log
 * just before it goes. `superseded` is asked before every look at the log: once it says yes
 * (another process's later run covers what is left), the run stops.
 */
export async function recoverMissedDeliveries(
	this: Context,
	subscriptionId: number,
	superseded: () => boolean = () => false,
): Promise<RecoveryRun> {
	const run: RecoveryRun = { redispatched: 0, failed: 0, read: 0 };
	const stop = () => {
		run.superseded = true;
		return run;
	};
	const done = new Set<number>();
	for (let pass = 1; pass <= PASSES; pass++) {
		if (superseded()) return stop();
		const entries = await readLog.call(this, subscriptionId);
		run.read += entries.length;
		const now = clock().now();
		const candidates: DeliveryLogEntry[] = [];
		let unsettled = 0;
		for (const entry of lastWords(entries)) {
			if (done.has(entry.id)) continue;
			const verdict = verdictOf(entry, now);
			if (verdict === 'redispatch') candidates.push(entry);
			if (verdict === 'unsettled') unsettled++;
		}
		for (let start = 0; start < candidates.length; start += REDISPATCH_BATCH) {
			if (superseded()) return stop();
			const batch = candidates.slice(start, start + REDISPATCH_BATCH);
			const current = await currentState.call(
				this,
				subscriptionId,
				new Set(batch.map((e) => e.id)),
			);
			for (const entry of batch) {
				if (run.redispatched + run.failed >= MAX_REDISPATCHES_PER_RUN) return run;
				// another process's run redispatched it since this run read the log
				if (!unchanged(entry, current.get(entry.id))) continue;
				done.add(entry.id);
				try {
					const answer = (await apiRequest.call(
						this,
						'POST',
						'webhook',
						`/${subscriptionId}/logs/${entry.id}/redispatch`,
					)) as { data?: IDataObject };
					if (answer?.data?.success === false) run.failed++;
					else run.redispatched++;
				} catch {
					run.failed++;
				}
			}
		}
		if (unsettled === 0 || pass === PASSES) break;
		await clock().sleep(SETTLE_MS);
	}
	return run;
}

/**
 * What n8n answers an unsigned probe of the webhook: a status, or undefined without an answer.
 * While the workflow is active the trigger answers 401 (no execution starts); n8n says 404
 * before activation has finished and after deactivation.
 */
async function probeWebhook(this: Context, url: string): Promise<number | undefined> {
	try {
		const response = (await this.helpers.httpRequest({
			method: 'POST',
			url,
			body: {},
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			skipSslCertificateValidation: true,
			timeout: 10_000,
		})) as { statusCode?: number };
		return response.statusCode;
	} catch {
		return undefined;
	}
}

/**
 * Waits until the webhook answers, so that what is redispatched is not refused by n8n itself.
 * Gives up after a while, or at once when n8n cannot reach its own public URL.
 */
async function webhookLive(this: Context, url: string): Promise<void> {
	const deadline = clock().now() + WEBHOOK_LIVE_WAIT_MS;
	for (let unreachable = 0; unreachable < UNREACHABLE_PROBES && clock().now() < deadline; ) {
		const status = await probeWebhook.call(this, url);
		if (status !== undefined && status !== 404) return;
		unreachable = status === undefined ? unreachable + 1 : 0;
		await clock().sleep(PROBE_INTERVAL_MS);
	}
}

function logRun(this: Context, why: string, run: RecoveryRun): void {
	const summary = `${run.redispatched} redispatched, ${run.failed} not redispatched (declined or failed), ${run.read} log entries read${run.superseded ? '; stopped: a run started later in another n8n process covers the rest' : ''}`;
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

/** Static-data field: when a recovery run was last started for the node (epoch ms). */
const SCANNED_AT = 'recoveryScannedAt';
/** Runs at most this often per workflow from deliveries, and a process's schedule checks this often. */
export const RESCAN_INTERVAL_MS = 15 * 60_000;
/**
 * A run set off by a delivery starts this long after it, plus up to START_JITTER_MS: processes
 * that start together do not all read the log at the same moment, and a run started just before
 * in another process has time to learn of this one and stop.
 */
const START_DELAY_MS = 2_000;
const START_JITTER_MS = 3_000;
const SCHEDULE_JITTER_MS = 60_000;

/**
 * The process-wide state of recovery, per workflow and node (`scope`): the runs under way here,
 * when this process last ran one, and its schedule. `resetRecoveryState` clears it for tests.
 */
const running = new Set<string>();
const lastRunHere = new Map<string, number>();
/** workflows whose last run here stopped at MAX_REDISPATCHES_PER_RUN: the next goes on at once */
const unfinished = new Set<string>();
const schedules = new Map<string, { subscriptionId: number }>();
/**
 * The newest run mark (SCANNED_AT) this process has seen, loaded or written, and the mark of its
 * own latest run. Static data is saved whole, so a save of one process can take another's newer
 * mark back; this process writes the newest it knows into what it saves, and a run of it whose
 * mark is older than another process's stops (that later run reads the log afresh and covers
 * the rest), so two runs overlap only until the newer mark has reached the older run's process.
 */
const newestMark = new Map<string, number>();
const ownMark = new Map<string, number>();
/** When this process started (n8n may load the node's code only at its first delivery). */
let processStartedAt = Math.floor(performance.timeOrigin);

/** For tests: forgets every run and stops every schedule, as a process started at `startedAt`. */
export function resetRecoveryState(startedAt = clock().now()): void {
	running.clear();
	lastRunHere.clear();
	unfinished.clear();
	schedules.clear();
	newestMark.clear();
	ownMark.clear();
	processStartedAt = startedAt;
}

function scopeOf(this: Context): string {
	return `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
}

/** The newest run mark known here for `scope`, after taking in the one `staticData` holds. */
function learnMark(scope: string, staticData: IDataObject): number {
	const loaded = Number(staticData[SCANNED_AT]);
	const known = newestMark.get(scope) ?? -Infinity;
	if (Number.isFinite(loaded) && loaded > known) {
		newestMark.set(scope, loaded);
		return loaded;
	}
	return known;
}

function markRun(scope: string, staticData: IDataObject, at: number): void {
	staticData[SCANNED_AT] = at;
	newestMark.set(scope, at);
	ownMark.set(scope, at);
}

/** Whether another process has started a run after the one of this process marked `mark`. */
function supersededRun(scope: string, mark: number): boolean {
	const newest = newestMark.get(scope) ?? -Infinity;
	return newest > mark && newest !== ownMark.get(scope);
}

/**
 * Every delivery that passed the checks: this process learns which recovery runs other processes
 * started, from the static data n8n loaded for it.
 */
export function noteRecoveryMark(this: IWebhookFunctions, staticData: IDataObject): void {
	learnMark(scopeOf.call(this), staticData);
}

/**
 * One run at a time per workflow in this process; a run already under way covers this one. A
 * run with a `mark` stops once another process has marked a later one.
 */
async function runOnce(
	this: Context,
	subscriptionId: number,
	why: string,
	mark?: number,
): Promise<void> {
	const scope = scopeOf.call(this);
	if (running.has(scope)) return;
	running.add(scope);
	lastRunHere.set(scope, clock().now());
	try {
		const superseded = () => mark !== undefined && supersededRun(scope, mark);
		const run = await recoverMissedDeliveries.call(this, subscriptionId, superseded);
		if (run.redispatched + run.failed >= MAX_REDISPATCHES_PER_RUN) unfinished.add(scope);
		else unfinished.delete(scope);
		logRun.call(this, why, run);
	} catch (error) {
		logFailure.call(this, why, error);
	} finally {
		running.delete(scope);
	}
}

/**
 * Every RESCAN_INTERVAL_MS while the workflow is active (its webhook does not answer 404), a run
 * when the newest log entries show a failure (or the last run here stopped at its cap) and this
 * process has not run one meanwhile: missed
 * deliveries arrive even when no new delivery comes to set a run off (the platform could not
 * reach n8n while n8n kept running). A later schedule for the same workflow replaces this one.
 */
function keepRecovering(this: Context, subscriptionId: number): void {
	const scope = scopeOf.call(this);
	const token = { subscriptionId };
	schedules.set(scope, token);
	const url = this.getNodeWebhookUrl('default') ?? '';
	const why = 'scheduled';
	void (async () => {
		while (schedules.get(scope) === token) {
			await clock().sleep(RESCAN_INTERVAL_MS + Math.floor(Math.random() * SCHEDULE_JITTER_MS));
			if (schedules.get(scope) !== token) return;
			if ((await probeWebhook.call(this, url)) === 404) break;
			if (clock().now() - (lastRunHere.get(scope) ?? -Infinity) < RESCAN_INTERVAL_MS) continue;
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
		if (schedules.get(scope) === token) schedules.delete(scope);
	})().catch((error: unknown) => {
		if (schedules.get(scope) === token) schedules.delete(scope);
		logFailure.call(this, why, error);
	});
}

/** Deactivation: this process's schedule for the workflow stops. */
export function stopRecovering(this: IHookFunctions): void {
	schedules.delete(scopeOf.call(this));
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
	markRun(scopeOf.call(this), staticData, mark);
	const url = this.getNodeWebhookUrl('default') ?? '';
	void (async () => {
		await webhookLive.call(this, url);
		await runOnce.call(this, subscriptionId, 'after activation', mark);
		keepRecovering.call(this, subscriptionId);
	})().catch((error: unknown) => logFailure.call(this, 'after activation', error));
}

/**
 * From a delivery: the first one a process receives after it started (n8n 2.x calls no trigger
 * method at start-up, so deliveries missed while n8n was down are found here) unless another
 * process has started a run since then, and at most every RESCAN_INTERVAL_MS per workflow.
 * Runs in the background (the delivery is not delayed), then on this process's schedule.
 * `staticData` (saved by n8n with the delivery) never goes back to an older mark than this
 * process knows.
 */
export function recoverFromDelivery(
	this: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const scope = scopeOf.call(this);
	const now = clock().now();
	const last = learnMark(scope, staticData);
	if (last > Number(staticData[SCANNED_AT] ?? -Infinity)) staticData[SCANNED_AT] = last;
	const ranEver = Number.isFinite(last);
	const due = !ranEver || now - last >= RESCAN_INTERVAL_MS;
	const otherRanSinceStart = ranEver && last >= processStartedAt;
	const firstHere = !lastRunHere.has(scope) && !schedules.has(scope) && !otherRanSinceStart;
	if ((!due && !firstHere) || running.has(scope)) return;
	markRun(scope, staticData, now);
	lastRunHere.set(scope, now);
	void (async () => {
		await clock().sleep(START_DELAY_MS + Math.floor(Math.random() * START_JITTER_MS));
		await runOnce.call(this, subscriptionId, 'found from a delivery', now);
		if (schedules.get(scope)?.subscriptionId !== subscriptionId)
			keepRecovering.call(this, subscriptionId);
	})().catch((error: unknown) => logFailure.call(this, 'found from a delivery', error));
}
