// One reading of a subscription's delivery log, as a pass of a recovery run (run.ts) makes it:
// newest first whatever order the platform lists it in, back to the horizon, and then each entry
// read again on the page where it was found. Which entries count: deliveryLog.ts.
import { clock, followPages, type ListPage } from '../../shared/transport';
import { listsOldestFirst, RECOVERY_HORIZON_MS, type DeliveryLogEntry } from './deliveryLog';

/**
 * Three days of log at 1,000 completions a day that each failed five times, every attempt an
 * entry of its own (15,000), with a redispatch's entry for each of them: 200 pages.
 */
export const MAX_LOG_ENTRIES_READ = 20_000;

/**
 * A page read again (`currentEntry`) this recently serves the entries on it that come next: a
 * restart's ten missed deliveries then take about one request each, not two, and all go within a
 * minute of recovery's share of the key. Another run's redispatch in that moment costs one
 * redispatch more, which the delivery ledger runs once.
 */
export const REREAD_REUSE_MS = 2_000;

/** One page of the log by its number; undefined once the run has made all the requests it may. */
export type LogPageReader = (number: number) => Promise<ListPage | undefined>;

const entriesOf = (page: ListPage) => page.items as unknown as DeliveryLogEntry[];

/**
 * The newest page of the log, whatever order the platform lists it in: listed oldest first, the
 * newest entries are on the last page, and page 1 would show only the oldest.
 */
export async function newestLogPage(
	readPage: (number: number) => Promise<ListPage>,
): Promise<DeliveryLogEntry[]> {
	const first = await readPage(1);
	const lastPage = first.lastPage ?? 1;
	if (!listsOldestFirst(entriesOf(first)) || lastPage <= 1) return entriesOf(first);
	return entriesOf(await readPage(lastPage));
}

export class LogReading {
	/** when the log was read (`entries`) */
	readAt = -Infinity;
	/** the page each entry was on */
	private readonly pageOf = new Map<number, number>();
	private oldestFirst = false;
	/** the pages `currentEntry` read, and when */
	private readonly reread = new Map<number, { page: ListPage | undefined; at: number }>();

	/** listed oldest first: the log's last page as this reading found it */
	lastPage: number | undefined;

	/**
	 * `lastPageHint`: a log listed oldest first, its last page as an earlier reading found it;
	 * this reading starts there (one request where the log grew by less than a page), not at page
	 * 1 to learn the order and the last page (two).
	 */
	constructor(
		private readonly readPage: LogPageReader,
		private readonly lastPageHint?: number,
	) {}

	/**
	 * Whether `entries` read all it was asked for: back to the horizon, to the entries judged
	 * before, or to the log's end; not when it stopped at MAX_LOG_ENTRIES_READ or for the run's
	 * limits.
	 */
	complete = false;

	/**
	 * The subscription's log back to the horizon, to the entries after `judgedUpTo` (every entry up
	 * to that id was judged before and left nothing to do), or the most a run reads; each entry
	 * once: entries logged while the run reads push older ones onto the next page, where they come
	 * again.
	 */
	async entries(judgedUpTo = -Infinity): Promise<DeliveryLogEntry[]> {
		const now = (this.readAt = clock().now());
		const entries = new Map<number, DeliveryLogEntry>();
		let reachedJudged = false;
		let full = false;
		const ended = await this.readNewestFirst((page) => {
			let withinHorizon = 0;
			for (const entry of page) {
				if (entry.id <= judgedUpTo) {
					reachedJudged = true;
					continue;
				}
				entries.set(entry.id, entry);
				const created = Date.parse(entry.created_at ?? '');
				if (Number.isNaN(created) || now - created <= RECOVERY_HORIZON_MS) withinHorizon++;
			}
			full = entries.size >= MAX_LOG_ENTRIES_READ;
			// newest first: a page wholly beyond the horizon, or reaching what was judged, ends it
			return full || reachedJudged || withinHorizon === 0;
		});
		this.complete = ended && !full;
		return [...entries.values()];
	}

	/**
	 * The entry `id` as the log shows it now, read again where `entries` found it: what another run
	 * (in another process) redispatched meanwhile shows as changed. Listed oldest first, an entry
	 * stays on its page; newest first, later entries push it onto a later page, so the reading goes
	 * on from its page until it is seen: one or two pages, however deep in the log.
	 */
	async currentEntry(id: number): Promise<DeliveryLogEntry | undefined> {
		const find = (page: ListPage) => entriesOf(page).find((entry) => entry.id === id);
		const first = this.pageOf.get(id) ?? 1;
		if (this.oldestFirst) {
			const page = await this.readAgain(first);
			return page === undefined ? undefined : find(page);
		}
		let found: DeliveryLogEntry | undefined;
		await followPages(first, async (number: number) => {
			const page = await this.readAgain(number);
			found = page === undefined ? undefined : find(page);
			return page === undefined || found !== undefined ? undefined : page.nextPage;
		});
		return found;
	}

	/** Page `number` read again, or as read again a moment ago (REREAD_REUSE_MS). */
	private async readAgain(number: number): Promise<ListPage | undefined> {
		const now = clock().now();
		const recent = this.reread.get(number);
		if (recent !== undefined && now - recent.at < REREAD_REUSE_MS) return recent.page;
		const page = await this.readPage(number);
		this.reread.set(number, { page, at: clock().now() });
		return page;
	}

	/**
	 * Reads the log newest first, whatever order the platform lists it in, a page at a time, until
	 * `stop` says so or the log ends: oldest first, the newest are on the last page. Notes the page
	 * each entry was on. False when a page could not be read (the run's requests spent).
	 */
	private async readNewestFirst(stop: (page: DeliveryLogEntry[]) => boolean): Promise<boolean> {
		let ended = true;
		const seen = (page: ListPage | undefined, number: number) => {
			if (page === undefined) {
				ended = false;
				return true;
			}
			const entries = entriesOf(page);
			for (const entry of entries) this.pageOf.set(entry.id, number);
			return stop(this.oldestFirst ? entries.reverse() : entries);
		};
		const hint = this.lastPageHint ?? 1;
		const hinted = hint > 1 ? await this.readPage(hint) : undefined;
		if (hinted !== undefined && listsOldestFirst(entriesOf(hinted)) && hinted.lastPage) {
			// the page that was the last one: the newest are on it or after it, read back from there
			this.oldestFirst = true;
			await this.readBackwards(new Map([[hint, hinted]]), hinted.lastPage, seen);
			return ended;
		}
		const first = await this.readPage(1);
		if (first === undefined) return false;
		this.oldestFirst = listsOldestFirst(entriesOf(first)) && first.lastPage !== undefined;
		if (this.oldestFirst) {
			await this.readBackwards(new Map([[1, first]]), first.lastPage ?? 1, seen);
			return ended;
		}
		await followPages({ page: first, number: 1 }, async ({ page, number }) => {
			if (seen(page, number) || page.nextPage === undefined) return undefined;
			const next = await this.readPage(page.nextPage);
			if (next === undefined) ended = false;
			return next === undefined ? undefined : { page: next, number: page.nextPage };
		});
		return ended;
	}

	/**
	 * A log listed oldest first, from its last page back (pages in `read` were read already) until
	 * `seen` says stop. Notes the last page, for the next reading's hint.
	 */
	private async readBackwards(
		read: Map<number, ListPage>,
		lastPage: number,
		seen: (page: ListPage | undefined, number: number) => boolean,
	): Promise<void> {
		this.lastPage = Math.max(lastPage, 1);
		await followPages(this.lastPage, async (number: number) => {
			const page = read.get(number) ?? (await this.readPage(number));
			return seen(page, number) || number === 1 ? undefined : number - 1;
		});
	}
}
