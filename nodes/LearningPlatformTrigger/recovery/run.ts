// One recovery run ("Recover Missed Deliveries"): reads the trigger's own subscription's delivery
// log and has the platform redispatch (spec operation 14) each delivery it could not make, so
// each arrives again and, recognised by the delivery ledger, starts exactly one execution. When
// runs happen: recoverySchedule.ts. Why: docs/design.md, "Missed deliveries".
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { apiRequest, clock, followPages, listPage, type ListPage } from '../../shared/transport';
import {
	listsOldestFirst,
	RECOVERY_HORIZON_MS,
	SETTLE_MS,
	untouchedSince,
	verdictOf,
	type DeliveryLogEntry,
} from './deliveryLog';
import { finalFailures } from './finalFailures';
import { recoveryTurn } from './pace';
import type { Redispatches } from './redispatchMemory';

export const MAX_REDISPATCHES_PER_RUN = 100;
/** Three days of log at about 1,600 deliveries a day (50 pages). */
export const MAX_LOG_ENTRIES_READ = 5_000;
/**
 * Most requests one run makes (log pages, each entry's page read again, redispatches); with
 * recovery's share of the key (recoveryPace.ts) a run lasts at most about 10 minutes. A run that
 * reaches it is unfinished: the next one goes on at once.
 */
export const MAX_REQUESTS_PER_RUN = 200;
/** A run looks again, SETTLE_MS apart, while entries were still settling. */
const PASSES = 3;
/** Before it looks at an entry, a run waits up to this long, at random. */
export const CHECK_JITTER_MS = 250;

export interface RecoveryRun {
	redispatched: number;
	/** redispatches the platform declined or that failed */
	failed: number;
	read: number;
	/** requests made: log pages read and redispatches asked for */
	requests: number;
	/** the run stopped early: another process started one after it, which covers the rest */
	superseded?: boolean;
	/** the run stopped: another run redispatched an entry it came to, and covers the rest */
	yielded?: boolean;
	/** the run stopped at MAX_REQUESTS_PER_RUN or MAX_REDISPATCHES_PER_RUN: more may be left */
	unfinished?: boolean;
}

/**
 * Waits for a recovery request's turn in recovery's share of the key, and counts it; false, and
 * the run unfinished, once the run has made MAX_REQUESTS_PER_RUN.
 */
async function takeTurn(run: RecoveryRun): Promise<boolean> {
	if (run.requests >= MAX_REQUESTS_PER_RUN) {
		run.unfinished = true;
		return false;
	}
	await recoveryTurn();
	run.requests++;
	return true;
}

type Context = IHookFunctions | IWebhookFunctions;

/** Where the log's entries were read: the page of each, and whether the log lists oldest first. */
interface LogPlaces {
	pageOf: Map<number, number>;
	oldestFirst: boolean;
}

/**
 * Reads the subscription's log newest first, whatever order the platform lists it in, a page at
 * a time, until `stop` says so or the log ends: oldest first, the newest are on the last page.
 * Notes in `places` the page each entry was on.
 */
async function readNewestFirst(
	this: Context,
	run: RecoveryRun,
	subscriptionId: number,
	places: LogPlaces,
	stop: (page: DeliveryLogEntry[]) => boolean,
): Promise<void> {
	const first = await readPage.call(this, run, subscriptionId, 1);
	if (first === undefined) return;
	const seen = (page: ListPage | undefined, number: number) => {
		if (page === undefined) return true;
		const entries = entriesOf(page);
		for (const entry of entries) places.pageOf.set(entry.id, number);
		return stop(places.oldestFirst ? entries.reverse() : entries);
	};
	places.oldestFirst = listsOldestFirst(entriesOf(first)) && first.lastPage !== undefined;
	if (places.oldestFirst) {
		// the last page first, back to the first, which was read already
		await followPages(Math.max(first.lastPage ?? 1, 1), async (number: number) => {
			const page = number === 1 ? first : await readPage.call(this, run, subscriptionId, number);
			return seen(page, number) || number === 1 ? undefined : number - 1;
		});
		return;
	}
	await followPages({ page: first, number: 1 }, async ({ page, number }) => {
		if (seen(page, number) || page.nextPage === undefined) return undefined;
		const next = await readPage.call(this, run, subscriptionId, page.nextPage);
		return next === undefined ? undefined : { page: next, number: page.nextPage };
	});
}

const entriesOf = (page: ListPage) => page.items as unknown as DeliveryLogEntry[];

/** One page of the log; undefined once the run has made all the requests it may. */
async function readPage(
	this: Context,
	run: RecoveryRun,
	subscriptionId: number,
	number: number,
): Promise<ListPage | undefined> {
	if (!(await takeTurn(run))) return undefined;
	return await listPage.call(this, `/${subscriptionId}/logs`, number);
}

/**
 * The subscription's log back to the horizon or the most a run reads, each entry once: entries
 * logged while the run reads push older ones onto the next page, where they come again.
 */
async function readLog(
	this: Context,
	run: RecoveryRun,
	subscriptionId: number,
	places: LogPlaces,
): Promise<DeliveryLogEntry[]> {
	const now = clock().now();
	const entries = new Map<number, DeliveryLogEntry>();
	await readNewestFirst.call(this, run, subscriptionId, places, (page) => {
		let withinHorizon = 0;
		for (const entry of page) {
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
 * The entry `id` as the log shows it now, read again where the run found it: what another run (in
 * another process) redispatched meanwhile shows as changed. Listed oldest first, an entry stays
 * on its page; newest first, later entries push it onto a later page, so the reading goes on from
 * its page until it is seen: one or two pages, however deep in the log.
 */
async function currentEntry(
	this: Context,
	run: RecoveryRun,
	subscriptionId: number,
	id: number,
	places: LogPlaces,
): Promise<DeliveryLogEntry | undefined> {
	const find = (page: ListPage) => entriesOf(page).find((entry) => entry.id === id);
	const first = places.pageOf.get(id) ?? 1;
	if (places.oldestFirst) {
		const page = await readPage.call(this, run, subscriptionId, first);
		return page === undefined ? undefined : find(page);
	}
	let found: DeliveryLogEntry | undefined;
	await followPages(first, async (number: number) => {
		const page = await readPage.call(this, run, subscriptionId, number);
		found = page === undefined ? undefined : find(page);
		return page === undefined || found !== undefined ? undefined : page.nextPage;
	});
	return found;
}

/**
 * What became of an entry the run took up: asked for; left (the run's limits, or the platform
 * shows it needs nothing now, as when it retried it after all); or taken by another run: read
 * again just before its redispatch, it shows a redispatch since this run read the log, or this
 * process has learnt meanwhile (`asked`, which deliveries' static data add to) that another
 * process asked for it.
 */
type Outcome = 'asked' | 'left' | 'taken';

/**
 * Whether `seen` (as the run read the log at `readAt`) is still to be asked for, read again as
 * `latest`, with what this process knows was asked for it (`learnt`): undefined when it is.
 */
function outcomeBeforeAsking(
	seen: DeliveryLogEntry,
	latest: DeliveryLogEntry | undefined,
	learnt: { tries: number; at: number } | undefined,
	readAt: number,
	now: number,
): Exclude<Outcome, 'asked'> | undefined {
	// a change without a redispatch is the platform's own late retry, not another run
	if (latest !== undefined && !untouchedSince(seen, latest) && latest.redispatched === true)
		return 'taken';
	if (learnt !== undefined && learnt.at >= readAt) return 'taken';
	if (verdictOf(latest ?? seen, now, learnt) !== 'redispatch') return 'left';
	return undefined;
}

/**
 * Has the platform redispatch `entry` unless, read again just before (its page, at once before the
 * redispatch: both turns are taken first), it shows that it needs none now. Whether asked for goes
 * into `done`.
 */
async function redispatchOne(
	this: Context,
	run: RecoveryRun,
	subscriptionId: number,
	entry: DeliveryLogEntry,
	places: LogPlaces,
	asked: Redispatches,
	done: Set<number>,
	readAt: number,
): Promise<Outcome> {
	// the redispatch's turn first, so that nothing waits between the look and the redispatch
	if (!(await takeTurn(run))) return 'left';
	// two runs started at the same moment would otherwise look at each entry together, each
	// before the other's redispatch shows
	await clock().sleep(Math.floor(Math.random() * CHECK_JITTER_MS));
	const latest = await currentEntry.call(this, run, subscriptionId, entry.id, places);
	const now = clock().now();
	const outcome = run.unfinished
		? 'left'
		: outcomeBeforeAsking(entry, latest, asked.get(entry.id), readAt, now);
	if (outcome !== undefined) {
		run.requests--; // the redispatch's turn went unused
		return outcome;
	}
	done.add(entry.id);
	// remembered before it is asked for, so a failed request is not asked for twice either
	asked.set(entry.id, { tries: entry.tries ?? 0, at: now });
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
	return 'asked';
}

/**
 * One recovery run: reads the subscription's delivery log and redispatches the deliveries the
 * platform could not make, oldest first, one after another, each checked against the log just
 * before it goes. `superseded` is asked before each: once it says yes
 * (another process's later run covers what is left), the run stops. `asked` is what was asked
 * for before (read and added to).
 */
export async function recoverMissedDeliveries(
	this: Context,
	subscriptionId: number,
	superseded: () => boolean = () => false,
	asked: Redispatches = new Map(),
): Promise<RecoveryRun> {
	const run: RecoveryRun = { redispatched: 0, failed: 0, read: 0, requests: 0 };
	const stop = () => {
		run.superseded = true;
		return run;
	};
	const done = new Set<number>();
	for (let pass = 1; pass <= PASSES; pass++) {
		if (superseded()) return stop();
		const places: LogPlaces = { pageOf: new Map(), oldestFirst: false };
		const readAt = clock().now();
		const entries = await readLog.call(this, run, subscriptionId, places);
		run.read += entries.length;
		// a log read only in part (the run's requests spent) is judged by the next run
		if (run.unfinished) return run;
		const now = clock().now();
		const candidates: DeliveryLogEntry[] = [];
		let unsettled = 0;
		for (const entry of finalFailures(entries, (id) => asked.has(id))) {
			if (done.has(entry.id)) continue;
			const verdict = verdictOf(entry, now, asked.get(entry.id));
			if (verdict === 'redispatch') candidates.push(entry);
			if (verdict === 'unsettled') unsettled++;
		}
		for (const entry of candidates) {
			if (superseded()) return stop();
			if (run.redispatched + run.failed >= MAX_REDISPATCHES_PER_RUN) {
				run.unfinished = true;
				return run;
			}
			const outcome = await redispatchOne.call(
				this,
				run,
				subscriptionId,
				entry,
				places,
				asked,
				done,
				readAt,
			);
			if (run.unfinished) return run;
			// another run (another process's, or a person's redispatch) is going through these
			// entries: going on beside it would sooner or later ask for an entry it is asking for
			if (outcome === 'taken') {
				run.yielded = true;
				return run;
			}
		}
		if (unsettled === 0 || pass === PASSES) break;
		await clock().sleep(SETTLE_MS);
	}
	return run;
}
