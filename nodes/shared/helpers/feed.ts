import type { IDataObject } from 'n8n-workflow';

import {
	apiFailure,
	apiRequest,
	failedStatusMessage,
	followPages,
	operationFailure,
	type FailureNotice,
	type LearningPlatformContext,
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

/** Where a feed read stands: the query parameters that pick the next page. */
interface FeedPosition {
	cursor?: string;
	updatedSince?: string;
}

/**
 * Reads the feed page by page from the caller's cursor or time, until the feed ends or
 * `maxRecords` unique records are collected. A rejected cursor restarts from the last known-good
 * `lastupdated` once; any other `status: "Failed"` page fails the walk.
 */
export async function walkFeed(
	this: LearningPlatformContext,
	options: FeedWalkOptions,
): Promise<FeedWalkResult> {
	const walk = new FeedWalk(options);
	if (walk.isFull()) return walk.result();
	const start = {
		cursor: options.cursor || undefined,
		updatedSince: options.updatedSince || undefined,
	};
	await followPages<FeedPosition>(start, async (position) => {
		const page = (await apiRequest.call(this, 'GET', 'report', '/completions', {
			qs: walk.query(position),
			itemIndex: walk.itemIndex,
			returnFailed: true,
		})) as FeedPage;
		walk.requests++;
		if (page?.status === 'Failed') return walk.restartAfter(this, page, position);
		return walk.take(page, position);
	});
	return walk.result();
}

/** One walk's settings and what it has collected so far. */
class FeedWalk {
	readonly itemIndex: number;
	requests = 0;
	private readonly pageSize: number;
	private readonly maxRecords: number | undefined;
	private readonly filterQuery: IDataObject;
	/** the caller's known-good time, the restart point when the walk has seen no record */
	private readonly knownGoodSince: string | undefined;
	// Map keeps insertion order; deleting before re-setting moves a record that came again
	// (it changed mid-walk and moved to the unvisited tail) to the position of its latest version.
	private readonly unique = new Map<string, IDataObject>();
	private nextCursor: string | null;
	private newestLastUpdated: string | null = null;
	private cursorRejected = false;
	private restartedFrom: string | undefined;
	private reachedEnd = false;

	constructor(options: FeedWalkOptions) {
		this.pageSize = Math.min(
			Math.max(Math.floor(options.pageSize ?? FEED_MAX_PAGE_SIZE), 1),
			FEED_MAX_PAGE_SIZE,
		);
		this.maxRecords =
			options.maxRecords !== undefined ? Math.max(Math.floor(options.maxRecords), 0) : undefined;
		this.filterQuery = feedFilterQuery(options.filters);
		this.itemIndex = options.itemIndex ?? 0;
		this.knownGoodSince = options.updatedSince;
		this.nextCursor = options.cursor || null;
	}

	isFull(): boolean {
		return this.maxRecords !== undefined && this.unique.size >= this.maxRecords;
	}

	/** The query of the page at `position`. */
	query(position: FeedPosition): IDataObject {
		// With a record cap, never ask for more than is still missing: the page then ends exactly
		// where the output ends, so `nextCursor` resumes without skipping anything.
		const limit =
			this.maxRecords !== undefined
				? Math.min(this.pageSize, this.maxRecords - this.unique.size)
				: this.pageSize;
		const qs: IDataObject = { ...this.filterQuery, limit };
		if (position.cursor) qs.cursor = position.cursor;
		if (position.updatedSince) qs.updatedSince = position.updatedSince;
		return qs;
	}

	/** After a `Failed` page: where a rejected cursor restarts, or the walk's failure. */
	restartAfter(
		context: LearningPlatformContext,
		page: FeedPage,
		position: FeedPosition,
	): FeedPosition {
		const errors = (page.errors ?? {}) as IDataObject;
		if (!position.cursor || errors.cursor === undefined) {
			throw apiFailure(context.getNode(), feedRefused(errors), {
				itemIndex: this.itemIndex,
				body: page,
			});
		}
		// Restart point: the newest record time seen in this walk, else the caller's known-good
		// time. Never the beginning of time, which would silently re-read everything.
		const restartPoint = this.newestLastUpdated ?? this.knownGoodSince;
		if (!restartPoint || restartPoint === this.restartedFrom) {
			const rejected = feedCursorRejected(errors, restartPoint);
			throw operationFailure(context.getNode(), rejected, this.itemIndex);
		}
		this.cursorRejected = true;
		this.restartedFrom = restartPoint;
		this.nextCursor = null;
		return { cursor: undefined, updatedSince: restartPoint };
	}

	/** Takes a page's records in; returns where the next page starts, or undefined to stop. */
	take(page: FeedPage, position: FeedPosition): FeedPosition | undefined {
		const records = Array.isArray(page?.data) ? page.data : [];
		for (const record of records) {
			const key = String(record.completionid);
			this.unique.delete(key);
			this.unique.set(key, record);
			const lastUpdated = typeof record.lastupdated === 'string' ? record.lastupdated : undefined;
			// the Z form is fixed-width, so string order is time order
			if (
				lastUpdated &&
				(this.newestLastUpdated === null || lastUpdated > this.newestLastUpdated)
			) {
				this.newestLastUpdated = lastUpdated;
			}
		}

		const pageCursor = page?.next_cursor ?? null;
		if (!pageCursor) {
			this.reachedEnd = true;
			return undefined;
		}
		this.nextCursor = pageCursor;
		if (this.isFull()) return undefined;
		// a page without records but with a cursor would loop forever on a misbehaving server
		if (records.length === 0 && pageCursor === position.cursor) return undefined;
		return { ...position, cursor: pageCursor };
	}

	result(): FeedWalkResult {
		return {
			records: [...this.unique.values()],
			nextCursor: this.nextCursor,
			newestLastUpdated: this.newestLastUpdated,
			requests: this.requests,
			cursorRejected: this.cursorRejected,
			reachedEnd: this.reachedEnd,
			...(this.restartedFrom !== undefined ? { restartedFrom: this.restartedFrom } : {}),
		};
	}
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
