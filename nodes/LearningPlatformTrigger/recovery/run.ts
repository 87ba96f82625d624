// One recovery run ("Recover Missed Deliveries"): reads the trigger's own subscription's delivery
// log and has the platform redispatch (spec operation 14) each delivery it could not make, so
// each arrives again and, recognised by the delivery ledger, starts exactly one execution. When
// runs happen: schedule.ts. Why: docs/design.md, "Missed deliveries".
import { clock, LIST_PAGE_SIZE, type ListPage } from '../../shared/transport';
import {
	mayNeedMore,
	SETTLE_MS,
	showsFailedRedispatch,
	untouchedSince,
	verdictOf,
	type DeliveryLogEntry,
} from './deliveryLog';
import { finalFailures } from './finalFailures';
import type { DeliveryLogApi } from './host';
import { LogReading, MAX_LOG_ENTRIES_READ } from './logReading';
import { recoveryTurn } from './pace';
import type { Redispatches } from './redispatchMemory';

export const MAX_REDISPATCHES_PER_RUN = 100;
/**
 * Most requests one run makes: a whole reading of the log at its deepest, and then, for each of
 * its redispatches, the request and a read of the entry's page or two; with recovery's share of
 * the key (pace.ts) a run lasts at most about 25 minutes. A run that reaches it is unfinished:
 * the schedule's next check goes on with it. Less would leave a run that must read a deep log (three days of
 * failures, one entry per attempt) no requests to redispatch with.
 */
export const MAX_REQUESTS_PER_RUN =
	Math.ceil(MAX_LOG_ENTRIES_READ / LIST_PAGE_SIZE) + 3 * MAX_REDISPATCHES_PER_RUN;
/** A run looks again, SETTLE_MS apart, while entries were still settling. */
const PASSES = 3;
/** Before it looks at an entry, a run waits up to this long, at random. */
export const CHECK_JITTER_MS = 250;

/** What a run did, for its log line and the schedule. */
export interface RunTally {
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
	/** the run stopped: a redispatch had failed, and the platform still does not reach n8n */
	unreachable?: boolean;
	/**
	 * Every entry up to this id is judged: the run read them all (back to the horizon or to the
	 * `judgedUpTo` it was given), and none needs, or may come to need, anything. Undefined when the
	 * run read the log only in part.
	 */
	judgedUpTo?: number;
	/** listed oldest first: the log's last page, as the run read it (`LogReading`) */
	lastPage?: number;
}

/** What a run is told besides its log: see `RecoveryRun`. */
export interface RunOptions {
	reaches?: ReachQuestion;
	/** every entry up to this id was judged by an earlier run: the run reads only what is newer */
	judgedUpTo?: number;
	/** listed oldest first: the log's last page as the last run read it (`LogReading`) */
	lastPage?: number;
	/**
	 * Log pages (by number) read a moment ago, by the check that decided on this run: its first
	 * reading takes them as they are instead of asking for them again
	 */
	pagesJustRead?: Map<number, ListPage>;
}

/**
 * Whether the platform reaches the webhook now, asked once a run, before it redispatches anything
 * again (reachability.ts); false stops the run. Undefined: the run does not ask.
 */
export type ReachQuestion = () => Promise<boolean | undefined>;

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
 * One recovery run: reads the subscription's delivery log and redispatches the deliveries the
 * platform could not make, oldest first, one after another, each checked against the log just
 * before it goes.
 */
export class RecoveryRun {
	readonly tally: RunTally = { redispatched: 0, failed: 0, read: 0, requests: 0 };
	/** the entries this run has asked for */
	private readonly done = new Set<number>();
	/** whether the platform reaches the webhook, once this run has asked */
	private reached: boolean | undefined;

	/**
	 * `superseded` is asked before each pass and each redispatch: once it says yes (another
	 * process's later run covers what is left), the run stops. `asked` is what was asked for
	 * before (read and added to). `options.reaches` is asked before a redispatch follows one that
	 * failed.
	 */
	constructor(
		private readonly api: DeliveryLogApi,
		private readonly subscriptionId: number,
		private readonly superseded: () => boolean = () => false,
		private readonly asked: Redispatches = new Map(),
		private readonly options: RunOptions = {},
	) {}

	async recover(): Promise<RunTally> {
		await this.passes();
		return this.tally;
	}

	private async passes(): Promise<void> {
		for (let pass = 1; pass <= PASSES; pass++) {
			if (this.superseded()) return this.end('superseded');
			const hint = this.tally.lastPage ?? this.options.lastPage;
			const log = new LogReading(async (number) => await this.readPage(number), hint);
			const entries = await log.entries(this.options.judgedUpTo);
			// only the first reading: a look again just before a redispatch, or a later pass, must
			// see the log as it is then
			this.options.pagesJustRead?.clear();
			this.tally.read += entries.length;
			this.tally.lastPage = log.lastPage;
			// a log read only in part (the run's requests spent) is judged by the next run
			if (this.tally.unfinished) return;
			const { candidates, unsettled, oldestOpen } = this.candidatesIn(entries);
			this.noteJudged(log, entries, oldestOpen);
			if (!(await this.redispatchAll(candidates, log))) return;
			if (unsettled === 0 || pass === PASSES) return;
			await clock().sleep(SETTLE_MS);
		}
	}

	private end(why: 'superseded' | 'yielded' | 'unfinished' | 'unreachable'): void {
		this.tally[why] = true;
	}

	/** After a pass that read all it was to read: judged up to the oldest entry still open. */
	private noteJudged(log: LogReading, entries: DeliveryLogEntry[], oldestOpen: number): void {
		if (!log.complete) return (this.tally.judgedUpTo = undefined);
		const newest = Math.max(
			this.options.judgedUpTo ?? -Infinity,
			...entries.map((entry) => entry.id),
		);
		const judged = Math.min(newest, oldestOpen - 1);
		this.tally.judgedUpTo = Number.isFinite(judged) ? judged : undefined;
	}

	/**
	 * The entries to redispatch now that this run has not asked for, how many are settling, and
	 * the oldest entry that needs or may come to need something (those two, the entries asked for
	 * by this run, and `mayNeedMore`).
	 */
	private candidatesIn(entries: DeliveryLogEntry[]) {
		const now = clock().now();
		const candidates: DeliveryLogEntry[] = [];
		let unsettled = 0;
		let oldestOpen = Infinity;
		for (const entry of finalFailures(entries, (id) => this.asked.has(id))) {
			const asked = this.asked.get(entry.id);
			const askedByThisRun = this.done.has(entry.id);
			const verdict = askedByThisRun ? 'skip' : verdictOf(entry, now, asked);
			if (verdict === 'redispatch') candidates.push(entry);
			// an entry still without an attempt is a delivery under way, judged by the next run
			if (verdict === 'unsettled' && (entry.tries ?? 0) > 0) unsettled++;
			const open = verdict !== 'skip' || askedByThisRun || mayNeedMore(entry, now, asked);
			if (open) oldestOpen = Math.min(oldestOpen, entry.id);
		}
		return { candidates, unsettled, oldestOpen };
	}

	/** Takes up `candidates` in turn; false once the run stops among them. */
	private async redispatchAll(candidates: DeliveryLogEntry[], log: LogReading): Promise<boolean> {
		if (!(await this.platformReaches(candidates))) return false;
		for (const entry of candidates) {
			if (this.superseded()) {
				this.end('superseded');
				return false;
			}
			if (this.tally.redispatched + this.tally.failed >= MAX_REDISPATCHES_PER_RUN) {
				this.end('unfinished');
				return false;
			}
			const outcome = await this.redispatchOne(entry, log);
			if (this.tally.unfinished) return false;
			// another run (another process's, or a person's redispatch) is going through these
			// entries: going on beside it would sooner or later ask for an entry it is asking for
			if (outcome === 'taken') {
				this.end('yielded');
				return false;
			}
		}
		return true;
	}

	/**
	 * Has the platform redispatch `entry` unless, read again just before (its page, at once before
	 * the redispatch: both turns are taken first), it shows that it needs none now. Whether asked
	 * for goes into `done`.
	 */
	private async redispatchOne(entry: DeliveryLogEntry, log: LogReading): Promise<Outcome> {
		// the redispatch's turn first, so that nothing waits between the look and the redispatch
		if (!(await this.takeTurn())) return 'left';
		// two runs started at the same moment would otherwise look at each entry together, each
		// before the other's redispatch shows
		await clock().sleep(Math.floor(Math.random() * CHECK_JITTER_MS));
		const latest = await log.currentEntry(entry.id);
		const now = clock().now();
		const outcome = this.tally.unfinished
			? 'left'
			: outcomeBeforeAsking(entry, latest, this.asked.get(entry.id), log.readAt, now);
		if (outcome !== undefined) {
			this.tally.requests--; // the redispatch's turn went unused
			return outcome;
		}
		this.done.add(entry.id);
		// remembered before it is asked for, so a failed request is not asked for twice either
		this.asked.set(entry.id, { tries: entry.tries ?? 0, at: now });
		try {
			const answer = await this.api.redispatch(this.subscriptionId, entry.id);
			if (answer?.data?.success === false) this.tally.failed++;
			else this.tally.redispatched++;
		} catch {
			this.tally.failed++;
		}
		return 'asked';
	}

	/**
	 * False, and the run ended, when a candidate shows that a redispatch failed already and the
	 * platform, asked (once a run), does not reach the webhook: every redispatch would fail again.
	 * Deliveries that failed only while n8n was down go without asking.
	 */
	private async platformReaches(candidates: DeliveryLogEntry[]): Promise<boolean> {
		const { reaches } = this.options;
		if (reaches === undefined || this.reached !== undefined) return this.reached !== false;
		const failedAgain = candidates.some((entry) =>
			showsFailedRedispatch(entry, this.asked.has(entry.id)),
		);
		if (!failedAgain) return true;
		if (!(await this.takeTurn())) return false;
		this.reached = (await reaches()) !== false;
		if (!this.reached) this.end('unreachable');
		return this.reached;
	}

	/** One page of the log; undefined once the run has made all the requests it may. */
	private async readPage(number: number): Promise<ListPage | undefined> {
		const justRead = this.options.pagesJustRead?.get(number);
		if (justRead !== undefined) {
			this.options.pagesJustRead?.delete(number);
			return justRead;
		}
		if (!(await this.takeTurn())) return undefined;
		return await this.api.logPage(this.subscriptionId, number);
	}

	/**
	 * Waits for a recovery request's turn in recovery's share of the key, and counts it; false, and
	 * the run unfinished, once the run has made MAX_REQUESTS_PER_RUN.
	 */
	private async takeTurn(): Promise<boolean> {
		if (this.tally.requests >= MAX_REQUESTS_PER_RUN) {
			this.end('unfinished');
			return false;
		}
		await recoveryTurn(async () => await this.api.keyUse());
		this.tally.requests++;
		return true;
	}
}

/** One run (`RecoveryRun`) for `subscriptionId`, through `api`. */
export async function recoverMissedDeliveries(
	api: DeliveryLogApi,
	subscriptionId: number,
	superseded?: () => boolean,
	asked?: Redispatches,
	options?: RunOptions,
): Promise<RunTally> {
	return await new RecoveryRun(api, subscriptionId, superseded, asked, options).recover();
}
