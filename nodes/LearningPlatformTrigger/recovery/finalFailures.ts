// Which failed entries of a delivery log are the last word on their delivery: the deliveries the
// platform could not make, under either reading of the log the spec allows (one entry per
// delivery counting `tries`, or one entry per attempt). Pure, like deliveryLog.ts. Why these
// rules: docs/design.md, "Missed deliveries", "Which entries".
import type { DeliveryLogEntry } from './deliveryLog';

/** An attempt logged up to this long before the previous attempt's answer still follows it. */
const LOG_TIME_TOLERANCE_MS = 1_000;
/**
 * How much longer than its answer took an entry may have been open and still hold one attempt:
 * the log's times are whole seconds, and the platform writes the entry a moment after the answer.
 */
const ONE_ATTEMPT_SPAN_SLACK_MS = 3_000;

interface Timed {
	entry: DeliveryLogEntry;
	created: number;
	updated: number;
	/** open for longer than its last answer took: one entry per delivery, continuing nothing */
	holdsSeveralAttempts: boolean;
}

/**
 * Whether the entry was open for longer than its last answer took: it holds several attempts, so
 * the log keeps one entry per delivery, and no entry continues another by `tries`. A redispatch's
 * flag moves `updated_at`, so a flagged entry does not tell.
 */
function holdsSeveralAttempts(entry: DeliveryLogEntry, created: number, updated: number): boolean {
	if (entry.redispatched === true || typeof entry.response_time_ms !== 'number') return false;
	return updated - created > entry.response_time_ms + ONE_ATTEMPT_SPAN_SLACK_MS;
}

/** Whether a redispatch of the entry was asked for, by this trigger or as the entry shows. */
const isRedispatched = (entry: DeliveryLogEntry, redispatchAsked: (id: number) => boolean) =>
	entry.redispatched === true || (entry.delivery_id ?? '') !== '' || redispatchAsked(entry.id);

/**
 * The answers a platform decides alike whether to retry: no answer (a time-out, a refused
 * connection), 408, 425, 429 and 5xx are taken as one, the answers of a receiver or a front that is
 * down or busy; any other status may be retried or not, each on its own (a 404, a 410).
 */
function answerKind(entry: DeliveryLogEntry): string {
	const status = entry.status_code;
	if (typeof status !== 'number' || status >= 500 || TRANSIENT_4XX.has(status)) return 'transient';
	return String(status);
}

const TRANSIENT_4XX = new Set([408, 425, 429]);

/**
 * Whether `later` may be taken for the attempt after `nearest`, the nearest failed attempt it could
 * continue, with no delivery hidden if it is not. Yes when `nearest` was redispatched already.
 * Otherwise the platform may have left `nearest` unretried, and it stays a last word: when another
 * attempt `later` could continue was answered otherwise (a 404 logged between another delivery's
 * 502 and its retry), or when `nearest` got an answer a platform may not retry and `later` did not
 * get it too (a 404, then a delivery that went through on its second try a moment later: with one
 * entry per delivery and attempts under 3 s apart, nothing else tells them apart). The cost where
 * the platform did retry: one redispatch more, which the delivery ledger runs once.
 */
function mayContinue(
	later: DeliveryLogEntry,
	nearest: DeliveryLogEntry,
	open: OpenFailures,
): boolean {
	// failed, of one attempt and continued by none: not among the open failures only if redispatched
	if (!open.holds(nearest)) return true;
	if (open.answeredOtherwise(nearest)) return false;
	const kind = answerKind(nearest);
	return kind === 'transient' || kind === answerKind(later);
}

/**
 * The failed attempts of normal deliveries seen so far that nothing continues and no redispatch
 * covers, counted per event, `tries` and kind of answer.
 */
class OpenFailures {
	private readonly counts = new Map<string, Map<string, number>>();
	private readonly members = new Set<number>();

	constructor(private readonly redispatchAsked: (id: number) => boolean) {}

	add({ entry, holdsSeveralAttempts }: Timed): void {
		if (entry.success !== false || holdsSeveralAttempts) return;
		if (isRedispatched(entry, this.redispatchAsked)) return;
		this.members.add(entry.id);
		const kinds = this.kindsOf(entry);
		const kind = answerKind(entry);
		kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
	}

	remove(entry: DeliveryLogEntry): void {
		if (!this.members.delete(entry.id)) return;
		const kinds = this.kindsOf(entry);
		const kind = answerKind(entry);
		kinds.set(kind, (kinds.get(kind) ?? 0) - 1);
	}

	holds(entry: DeliveryLogEntry): boolean {
		return this.members.has(entry.id);
	}

	/** Whether another of them, counted with `entry`, was answered otherwise. */
	answeredOtherwise(entry: DeliveryLogEntry): boolean {
		const kind = answerKind(entry);
		for (const [other, count] of this.kindsOf(entry)) if (other !== kind && count > 0) return true;
		return false;
	}

	private kindsOf(entry: DeliveryLogEntry): Map<string, number> {
		const key = `${entry.event_type ?? ''}\u0000${entry.tries ?? 0}`;
		let kinds = this.counts.get(key);
		if (kinds === undefined) this.counts.set(key, (kinds = new Map()));
		return kinds;
	}
}

/**
 * The entries with usable times, each once however often given, oldest first (by `created_at`,
 * then id).
 */
function timedOldestFirst(entries: DeliveryLogEntry[]): Timed[] {
	const timed: Timed[] = [];
	const seen = new Set<number>();
	for (const entry of entries) {
		if (seen.has(entry.id)) continue;
		seen.add(entry.id);
		const created = Date.parse(entry.created_at ?? '');
		const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
		if (Number.isFinite(created) && Number.isFinite(updated))
			timed.push({
				entry,
				created,
				updated,
				holdsSeveralAttempts: holdsSeveralAttempts(entry, created, updated),
			});
	}
	timed.sort((a, b) => a.created - b.created || a.entry.id - b.entry.id);
	return timed;
}

/** The entries holding each redispatch's `delivery_id`, met oldest first. */
class RedispatchIds {
	/** how many entries of the whole log hold each id */
	private readonly holders = new Map<string, number>();
	private readonly newest = new Map<string, Timed>();

	constructor(timed: Timed[]) {
		for (const { entry } of timed) {
			const deliveryId = entry.delivery_id ?? '';
			if (deliveryId !== '') this.holders.set(deliveryId, (this.holders.get(deliveryId) ?? 0) + 1);
		}
	}

	/**
	 * Meets `later`, the next entry oldest first: an entry met before with its id is continued by
	 * it (into `continued`). True when `later` is the entry a redispatch was asked for: the first
	 * of several entries holding a redispatch's id is the one asked for, marked with it, and the
	 * redispatch's attempts are entries of their own (one entry per attempt): its `tries` are still
	 * its own attempt's, so it may continue an attempt of its own delivery. Alone with its id, it
	 * holds the redispatch's attempts itself (one entry per delivery).
	 */
	meet(later: Timed, continued: Set<number>): boolean {
		const deliveryId = later.entry.delivery_id ?? '';
		if (deliveryId === '') return false;
		const known = this.newest.get(deliveryId);
		this.newest.set(deliveryId, later);
		if (known) {
			continued.add(known.entry.id);
			return false;
		}
		return (this.holders.get(deliveryId) ?? 0) > 1;
	}
}

/**
 * The nearest failed attempt before `timed[index]` that it could continue: same event, `tries` one
 * lower, the same `delivery_id` (any, for the entry a redispatch was asked for: `askedFor`),
 * answered before it was logged, neither holding several attempts, and not continued already.
 */
function nearestEarlier(
	timed: Timed[],
	index: number,
	askedFor: boolean,
	continued: Set<number>,
): DeliveryLogEntry | undefined {
	const later = timed[index];
	const tries = later.entry.tries ?? 0;
	const deliveryId = later.entry.delivery_id ?? '';
	for (let i = index - 1; i >= 0; i--) {
		const earlier = timed[i];
		if (
			earlier.entry.success === false &&
			earlier.entry.tries === tries - 1 &&
			earlier.entry.event_type === later.entry.event_type &&
			(askedFor || (earlier.entry.delivery_id ?? '') === deliveryId) &&
			!earlier.holdsSeveralAttempts &&
			earlier.updated <= later.created + LOG_TIME_TOLERANCE_MS &&
			!continued.has(earlier.entry.id)
		)
			return earlier.entry;
	}
	return undefined;
}

/**
 * The failed entries that are the last word on their delivery, so that each delivery the platform
 * could not make is redispatched once under either reading of the log (one entry per delivery
 * counting `tries`, or one entry per attempt, `tries` being its number). An entry is not the last
 * word when
 * - a later attempt continues it: an entry of the same event and `delivery_id` (or the entry a
 *   redispatch was asked for, marked with its id, when the redispatch's attempts are entries of
 *   their own) with `tries` one higher, logged after it was answered (one entry per attempt;
 *   each continuing entry takes one, the nearest), neither of them holding several attempts,
 *   and the platform cannot have left the nearest unretried (`mayContinue`; `redispatchAsked`
 *   names the entries this trigger asked a redispatch of);
 * - a redispatch of it went on as entries of their own: a later entry has its `delivery_id`.
 * Entries in any order, each named once however often it is given.
 */
export function finalFailures(
	entries: DeliveryLogEntry[],
	redispatchAsked: (id: number) => boolean = () => false,
): DeliveryLogEntry[] {
	const timed = timedOldestFirst(entries);
	const redispatchIds = new RedispatchIds(timed);
	const continued = new Set<number>();
	const open = new OpenFailures(redispatchAsked);
	for (const [index, later] of timed.entries()) {
		open.add(later);
		const askedFor = redispatchIds.meet(later, continued);
		if ((later.entry.tries ?? 0) < 2 || later.holdsSeveralAttempts) continue;
		const nearest = nearestEarlier(timed, index, askedFor, continued);
		if (nearest === undefined || !mayContinue(later.entry, nearest, open)) continue;
		continued.add(nearest.id);
		open.remove(nearest);
	}
	return timed
		.filter(({ entry }) => entry.success === false && !continued.has(entry.id))
		.map(({ entry }) => entry);
}
