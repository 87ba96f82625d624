import type { IDataObject } from 'n8n-workflow';

import type { LearningPlatformContext } from '../transport';
import {
	apiFailure,
	apiRequest,
	failedStatusMessage,
	operationFailure,
	type FailureNotice,
} from '../transport';
import { enabledFlags } from './parameters';

// The completions change-feed walker (`GET {report_root}/completions`), shared by Completion →
// Get Many and the polling trigger: the spec's sync rules once (same filters on every page,
// follow `next_cursor` until null, upsert on `completionid`, restart a rejected cursor from the
// last known-good `lastupdated`).

/** The feed's documented `completionstatus` values (spec: Completion record). */
export const COMPLETION_STATUSES = [
	'Completed',
	'In Progress',
	'Enrolled',
	'Archived',
	'Viewed',
	'Did Not Complete',
] as const;

/** What a simplified completion record keeps: who, what, status, when. */
export const COMPLETION_SIMPLIFIED_FIELDS = [
	'completionid',
	'username',
	'contentid',
	'contentname',
	'contenttype',
	'completionstatus',
	'timecompleted',
	'lastupdated',
] as const;

/** The feed's on/off query flags; FeedFilters, feedFilterQuery and feedFlagOptions follow this list. */
export const FEED_FLAGS = [
	'showSuspended',
	'includeEnrolments',
	'showNotCompleted',
	'userFields',
	'contentFields',
] as const;

type FeedFlag = (typeof FEED_FLAGS)[number];

export interface FeedFilters extends Partial<Record<FeedFlag, boolean>> {
	contentId?: number;
	/** `course`, `live learning`, `resource` or `video` (any case) */
	contentType?: string;
}

export interface FeedWalkOptions {
	filters: FeedFilters;
	/** continue from this cursor */
	cursor?: string;
	/**
	 * strict `YYYY-MM-DDThh:mm:ssZ` (see toFeedTimestamp). With a cursor, the later position
	 * wins on the server; it is also the restart point if the cursor is rejected.
	 */
	updatedSince?: string;
	/** records per request, 1 to 500; default 500 (fewest requests) */
	pageSize?: number;
	/** stop once this many unique records are collected */
	maxRecords?: number;
	itemIndex?: number;
}

export interface FeedWalkResult {
	/** unique by completionid, latest version kept, ordered by position of the latest version */
	records: IDataObject[];
	/** last non-null cursor seen (the resume point); null when no cursor was ever seen */
	nextCursor: string | null;
	/** newest `lastupdated` among the records returned, null when none */
	newestLastUpdated: string | null;
	requests: number;
	/** a rejected cursor was restarted from the last known-good lastupdated */
	cursorRejected: boolean;
	restartedFrom?: string;
	/** the last page said nothing lies beyond it (false when maxRecords stopped the walk first) */
	reachedEnd: boolean;
}

export const FEED_MAX_PAGE_SIZE = 500;

interface FeedPage {
	status?: string;
	data?: IDataObject[];
	next_cursor?: string | null;
	errors?: IDataObject;
}

/** The filters as query parameters; booleans only when enabled (the API's `true` convention). */
export function feedFilterQuery(filters: FeedFilters): IDataObject {
	const query: IDataObject = {};
	if (
		filters.contentId !== undefined &&
		filters.contentId !== null &&
		String(filters.contentId) !== ''
	) {
		query.contentId = filters.contentId;
	}
	if (filters.contentType) query.contentType = filters.contentType.toLowerCase();
	return { ...query, ...enabledFlags(filters, FEED_FLAGS) };
}

export async function walkFeed(
	this: LearningPlatformContext,
	options: FeedWalkOptions,
): Promise<FeedWalkResult> {
	const pageSize = Math.min(
		Math.max(Math.floor(options.pageSize ?? FEED_MAX_PAGE_SIZE), 1),
		FEED_MAX_PAGE_SIZE,
	);
	const maxRecords =
		options.maxRecords !== undefined ? Math.max(Math.floor(options.maxRecords), 0) : undefined;
	const filterQuery = feedFilterQuery(options.filters);
	const itemIndex = options.itemIndex ?? 0;

	// Map keeps insertion order; deleting before re-setting moves a record that came again
	// (it changed mid-walk and moved to the unvisited tail) to the position of its latest version.
	const unique = new Map<string, IDataObject>();
	let cursor = options.cursor || undefined;
	let updatedSince = options.updatedSince || undefined;
	let nextCursor: string | null = cursor ?? null;
	let newestLastUpdated: string | null = null;
	let requests = 0;
	let cursorRejected = false;
	let restartedFrom: string | undefined;
	let reachedEnd = false;

	if (maxRecords === 0) {
		return { records: [], nextCursor, newestLastUpdated, requests, cursorRejected, reachedEnd };
	}

	for (;;) {
		// With a record cap, never ask for more than is still missing: the page then ends exactly
		// where the output ends, so `nextCursor` resumes without skipping anything.
		const limit =
			maxRecords !== undefined ? Math.min(pageSize, maxRecords - unique.size) : pageSize;
		const qs: IDataObject = { ...filterQuery, limit };
		if (cursor) qs.cursor = cursor;
		if (updatedSince) qs.updatedSince = updatedSince;

		const page = (await apiRequest.call(this, 'GET', 'report', '/completions', {
			qs,
			itemIndex,
			returnFailed: true,
		})) as FeedPage;
		requests++;

		if (page?.status === 'Failed') {
			const errors = (page.errors ?? {}) as IDataObject;
			if (cursor && errors.cursor !== undefined) {
				// Restart point: the newest record time seen in this walk, else the caller's
				// known-good time. Never the beginning of time, which would silently re-read everything.
				const restartPoint = newestLastUpdated ?? options.updatedSince;
				if (!restartPoint || restartPoint === restartedFrom) {
					const rejected = feedCursorRejected(errors, restartPoint);
					throw operationFailure(this.getNode(), rejected, itemIndex);
				}
				cursorRejected = true;
				restartedFrom = restartPoint;
				cursor = undefined;
				updatedSince = restartPoint;
				nextCursor = null;
				continue;
			}
			throw apiFailure(this.getNode(), feedRefused(errors), { itemIndex, body: page });
		}

		const records = Array.isArray(page?.data) ? page.data : [];
		for (const record of records) {
			const key = String(record.completionid);
			unique.delete(key);
			unique.set(key, record);
			const lastUpdated = typeof record.lastupdated === 'string' ? record.lastupdated : undefined;
			// the Z form is fixed-width, so string order is time order
			if (lastUpdated && (newestLastUpdated === null || lastUpdated > newestLastUpdated)) {
				newestLastUpdated = lastUpdated;
			}
		}

		const pageCursor = page?.next_cursor ?? null;
		if (pageCursor) nextCursor = pageCursor;
		if (!pageCursor) {
			reachedEnd = true;
			break;
		}
		if (maxRecords !== undefined && unique.size >= maxRecords) break;
		// a page without records but with a cursor would loop forever on a misbehaving server
		if (records.length === 0 && pageCursor === cursor) break;
		cursor = pageCursor;
	}

	return {
		records: [...unique.values()],
		nextCursor,
		newestLastUpdated,
		requests,
		cursorRejected,
		reachedEnd,
		...(restartedFrom !== undefined ? { restartedFrom } : {}),
	};
}

// ---- The feed's own failures ---------------------------------------------------------------------

function feedRefused(errors: IDataObject | undefined): FailureNotice {
	return {
		message: `The completions feed refused the request: ${failedStatusMessage(errors)}`,
	};
}

/** The feed refused a cursor and there was no (other) known-good time to restart from. */
function feedCursorRejected(
	errors: IDataObject | undefined,
	restartPoint: string | undefined,
): FailureNotice {
	return {
		message: `The feed rejected the cursor: ${failedStatusMessage(errors)}`,
		description: restartPoint
			? `Restarting from ${restartPoint} was rejected again. Clear the cursor and set "Updated Since" to re-read from a known time.`
			: 'There is no known-good time to restart from. Clear the cursor and set "Updated Since" to the newest "lastupdated" you have processed, so the feed continues from there instead of from the beginning.',
	};
}
