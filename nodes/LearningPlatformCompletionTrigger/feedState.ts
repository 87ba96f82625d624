import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';

import { formatFeedTimestamp } from '../shared/helpers';

// The polling trigger's position in the completions feed, and the pure step that moves it after
// a walk (no n8n context, so every rule is tested with plain objects). Why more than a cursor is
// kept: docs/design.md, "The Completion Trigger's position in the feed".

export interface FeedState {
	version: 1;
	/** last non-null cursor of the feed, null until the feed handed one out */
	cursor: string | null;
	/** `updatedSince` for the next walk: the restart point ('' = beginning of time) */
	since: string;
	/** newest `lastupdated` processed (the last-known-good time), null before the first record */
	lastKnownGood: string | null;
	/** completionid -> `${lastupdated}|${digest}` of the version already processed */
	seen: Record<string, string>;
	/** the server-side filters the cursor was obtained with (a cursor does not store them) */
	filters: string;
	/** the start setting this state was begun with; changing the setting starts over */
	origin: string;
}

export interface AdvanceOptions {
	/** client-side status filter; empty passes every status */
	statuses: string[];
	/** page size of the walk: the re-read window after the resume point is at most one page */
	pageSize: number;
}

export interface AdvanceResult {
	/** records to emit, in feed order (oldest change first), latest version of each */
	emit: IDataObject[];
	next: FeedState;
}

export interface WalkOutcome {
	records: IDataObject[];
	nextCursor: string | null;
	newestLastUpdated: string | null;
}

/** Changes appear in the feed up to about 60 s late (spec §6 rule 6); twice that as a margin. */
export const VISIBILITY_MARGIN_SECONDS = 120;
/**
 * Upper bound of remembered versions, so static data stays small (about 50 bytes each). Enough
 * for every normal poll: the resume page is at most one page, and without a cursor everything
 * since `since` fit in one page. Only a cursor rejection after a burst of more changes than
 * this within the margin can emit some records a second time (consumers upsert: spec rule 7).
 */
export const SEEN_LIMIT = 1000;

export function initialFeedState(since: string, filters: string, origin: string): FeedState {
	return { version: 1, cursor: null, since, lastKnownGood: null, seen: {}, filters, origin };
}

/** Reads a state written by `writeFeedState`; anything unrecognised counts as no state. */
export function readFeedState(staticData: IDataObject): FeedState | undefined {
	const candidate = staticData.feed as IDataObject | undefined;
	if (!candidate || typeof candidate !== 'object' || candidate.version !== 1) return undefined;
	const seen = candidate.seen;
	if (
		typeof candidate.since !== 'string' ||
		!seen ||
		typeof seen !== 'object' ||
		Array.isArray(seen)
	)
		return undefined;
	return {
		version: 1,
		cursor:
			typeof candidate.cursor === 'string' && candidate.cursor !== '' ? candidate.cursor : null,
		since: candidate.since,
		lastKnownGood: typeof candidate.lastKnownGood === 'string' ? candidate.lastKnownGood : null,
		seen: { ...(seen as Record<string, string>) },
		filters: typeof candidate.filters === 'string' ? candidate.filters : '',
		origin: typeof candidate.origin === 'string' ? candidate.origin : '',
	};
}

/** Writes the state into the node's static data object in place (n8n observes that object). */
export function writeFeedState(staticData: IDataObject, state: FeedState): void {
	staticData.feed = {
		version: state.version,
		cursor: state.cursor,
		since: state.since,
		lastKnownGood: state.lastKnownGood,
		seen: state.seen,
		filters: state.filters,
		origin: state.origin,
	} as unknown as IDataObject;
}

function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value !== null && typeof value === 'object') {
		const entries = Object.keys(value as IDataObject)
			.sort()
			.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as IDataObject)[key])}`);
		return `{${entries.join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

function lastUpdatedOf(record: IDataObject): string {
	return typeof record.lastupdated === 'string' ? record.lastupdated : '';
}

/**
 * Identifies one version of a record. `lastupdated` has whole seconds, so two changes within a
 * second share it; the digest of the whole record tells them apart.
 */
export function recordVersion(record: IDataObject): string {
	const digest = createHash('sha256').update(canonicalJson(record)).digest('hex').slice(0, 16);
	return `${lastUpdatedOf(record)}|${digest}`;
}

function versionTime(version: string): string {
	const separator = version.indexOf('|');
	return separator === -1 ? '' : version.slice(0, separator);
}

/** `YYYY-MM-DDThh:mm:ssZ` minus some seconds, in the same form. */
export function secondsBefore(timestamp: string, seconds: number): string {
	const milliseconds = Date.parse(timestamp);
	if (Number.isNaN(milliseconds)) return '';
	return formatFeedTimestamp(milliseconds - seconds * 1000);
}

/** Later of two `Z`-form times ('' and null are the beginning of time). Fixed width: string order is time order. */
function later(a: string | null, b: string | null): string {
	const left = a ?? '';
	const right = b ?? '';
	return left >= right ? left : right;
}

/** The client-side status filter (the feed has no server-side one); no statuses passes every record. */
export function passesStatusFilter(statuses: readonly string[], record: IDataObject): boolean {
	const status = typeof record.completionstatus === 'string' ? record.completionstatus : '';
	return statuses.length === 0 || statuses.includes(status);
}

/**
 * Decides what a walk emits and where the next poll starts. Records whose version was already
 * processed are dropped; the status filter applies to the rest. The returned state is only to
 * be stored once the walk succeeded, so a failed poll never moves past records it did not emit.
 */
export function advanceFeedState(
	state: FeedState,
	walk: WalkOutcome,
	options: AdvanceOptions,
): AdvanceResult {
	const versionOf = memoizedVersions();
	const emit = walk.records.filter((record) => {
		const processed = state.seen[idOf(record)];
		if (processed !== undefined && processed === versionOf(record)) return false;
		return passesStatusFilter(options.statuses, record);
	});

	const lastKnownGood = later(state.lastKnownGood, walk.newestLastUpdated) || null;
	const since = later(
		state.since,
		lastKnownGood ? secondsBefore(lastKnownGood, VISIBILITY_MARGIN_SECONDS) : '',
	);
	const seen = versionsToRemember(state, walk, since, options.pageSize, versionOf);

	return {
		emit,
		next: {
			version: 1,
			cursor: walk.nextCursor,
			since,
			lastKnownGood,
			seen: Object.fromEntries(seen),
			filters: state.filters,
			origin: state.origin,
		},
	};
}

function idOf(record: IDataObject): string {
	return String(record.completionid);
}

/**
 * `recordVersion`, computed once per record. A version costs a digest of the whole record: computed
 * only where it is compared or kept, which matters when a first walk from the beginning reads a
 * whole tenancy.
 */
function memoizedVersions(): (record: IDataObject) => string {
	const versions = new Map<IDataObject, string>();
	return (record) => {
		let version = versions.get(record);
		if (version === undefined) {
			version = recordVersion(record);
			versions.set(record, version);
		}
		return version;
	};
}

/** The versions the next poll compares with: the resume page, then the newest since `since`. */
function versionsToRemember(
	state: FeedState,
	walk: WalkOutcome,
	since: string,
	pageSize: number,
	versionOf: (record: IDataObject) => string,
): Map<string, string> {
	const seen = new Map<string, string>();
	// The page after the resume cursor is read again next time: always remember all of it.
	// (records are ordered by the position of their latest version, so it is the tail of the walk)
	if (walk.nextCursor !== null) {
		for (const record of walk.records.slice(-pageSize)) seen.set(idOf(record), versionOf(record));
	}
	// Everything at or after `since` can come back after a rejected cursor (and, without a
	// cursor, on every poll): remember the newest of those, this walk's versions winning.
	const window = new Map<string, string>();
	for (const [id, version] of Object.entries(state.seen)) {
		if (versionTime(version) >= since) window.set(id, version);
	}
	for (const record of walk.records) {
		if (lastUpdatedOf(record) >= since) window.set(idOf(record), versionOf(record));
		else window.delete(idOf(record));
	}
	const newestFirst = [...window.entries()].sort((a, b) => {
		const [left, right] = [versionTime(a[1]), versionTime(b[1])];
		return left === right ? 0 : left < right ? 1 : -1;
	});
	for (const [id, version] of newestFirst) {
		if (seen.size >= SEEN_LIMIT) break;
		if (!seen.has(id)) seen.set(id, version);
	}
	return seen;
}
