// Reading the platform's delivery log of a subscription (spec operation 13): its entries, and which
// of the entries that stand for a delivery the platform could not make (finalFailures.ts) to
// redispatch now. Pure: no request, no clock, nothing of n8n at run time. Why these rules:
// docs/design.md, "Missed deliveries".

/**
 * How far back failed deliveries are redispatched: an outage of three days (a weekend, Friday
 * evening to Monday morning) with an hour to spare for the first run after it. The delivery
 * ledger remembers longer.
 */
export const RECOVERY_HORIZON_MS = 73 * 60 * 60_000;
/** An entry changed this recently may still be retried by the platform itself. */
export const SETTLE_MS = 30_000;
/** A redispatch that failed again is tried again after this long. */
export const REDISPATCH_AGAIN_AFTER_MS = 10 * 60_000;
/**
 * How long after a redispatch (or the platform's last attempt of it) its entry may still record
 * a failure: the platform retries a redispatch on a schedule the spec does not show.
 */
export const OPEN_AFTER_REDISPATCH_MS = 6 * 60 * 60_000;

export interface DeliveryLogEntry {
	id: number;
	event_type?: string;
	delivery_id?: string;
	success?: boolean;
	tries?: number;
	status_code?: number | null;
	response_time_ms?: number | null;
	redispatched?: boolean;
	created_at?: string;
	updated_at?: string;
}

export type Verdict = 'redispatch' | 'unsettled' | 'skip';

/**
 * What to do with one entry that stands for a delivery the platform gave up on, at `now`.
 * `asked`: what the entry showed when this trigger asked for its redispatch, if it did.
 *
 * An entry is redispatched once. Again only when the entry itself shows that the redispatch
 * failed: it recorded the redispatch's attempts (more `tries` than when it was asked for, or,
 * asked for by a process whose memory is lost, a `delivery_id` of its redispatch) and is still
 * failed, ten minutes on. An entry that was asked for and shows no new attempt, or that is only
 * flagged `redispatched`, went on as entries of their own (judged as they come) or was declined.
 */
export function verdictOf(
	entry: DeliveryLogEntry,
	now: number,
	asked?: { tries: number },
): Verdict {
	if (entry.success !== false) return 'skip';
	const created = Date.parse(entry.created_at ?? '');
	const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
	if (!Number.isFinite(created) || !Number.isFinite(updated)) return 'skip';
	if (now - created > RECOVERY_HORIZON_MS) return 'skip';
	if (now - updated < SETTLE_MS) return 'unsettled';
	const recordsItsRedispatch = asked
		? (entry.tries ?? 0) > asked.tries
		: entry.redispatched === true && (entry.delivery_id ?? '') !== '';
	if (asked || entry.redispatched === true) {
		if (!recordsItsRedispatch) return 'skip';
		if (now - updated < REDISPATCH_AGAIN_AFTER_MS) return 'skip';
	}
	return 'redispatch';
}

/**
 * Whether the entry `seen` when the log was read is still as it was in `current`, the same entry
 * read again (undefined: not found again). A changed one was redispatched meanwhile, by another
 * process's run.
 */
export const untouchedSince = (seen: DeliveryLogEntry, current?: DeliveryLogEntry): boolean =>
	current !== undefined &&
	current.redispatched === seen.redispatched &&
	current.delivery_id === seen.delivery_id &&
	current.updated_at === seen.updated_at;

/**
 * Whether a page of the log lists its entries oldest first. The spec shows no order: an ordinary
 * paginated query lists oldest first, the sandbox and many dashboards newest first. Ids grow with
 * time, so the page's first and last entries tell.
 */
export function listsOldestFirst(page: DeliveryLogEntry[]): boolean {
	return page.length > 1 && page[0].id < page[page.length - 1].id;
}

/**
 * Whether a failed entry tells of a redispatch that failed too: this trigger asked for it
 * (`asked`), the platform flags it, or it is itself a redispatch's attempt (a `delivery_id`). Then
 * the platform may not reach n8n at all, and asking again would only fail again.
 */
export const showsFailedRedispatch = (entry: DeliveryLogEntry, asked: boolean): boolean =>
	asked || entry.redispatched === true || (entry.delivery_id ?? '') !== '';

/**
 * Whether an entry that needs nothing now (verdict `skip`) may need a redispatch later, so that a
 * run cannot count it as judged for good: a failed redispatch waiting out its ten minutes, or a
 * redispatch recent enough that the platform may still record its failure on the entry.
 */
export function mayNeedMore(
	entry: DeliveryLogEntry,
	now: number,
	asked?: { tries: number; at: number },
): boolean {
	if (entry.success !== false) return false;
	if (verdictOf(entry, now + REDISPATCH_AGAIN_AFTER_MS, asked) === 'redispatch') return true;
	const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
	const askedLately = asked !== undefined && now - asked.at < OPEN_AFTER_REDISPATCH_MS;
	const flaggedLately = entry.redispatched === true && now - updated < OPEN_AFTER_REDISPATCH_MS;
	return askedLately || flaggedLately;
}
