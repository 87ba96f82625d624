import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import {
	toFeedTimestamp,
	COMPLETION_SIMPLIFIED_FIELDS,
	FEED_FLAGS,
	walkFeed,
	enabledFlags,
	optionalId,
	readLimit,
	simplifyRecords,
} from '../../../shared/helpers';
import type { FeedFilters, FeedWalkResult } from '../../../shared/helpers';
import { hintOnce } from '../../helpers/hints';
import { moreNote, runsAsTool } from '../../helpers/toolOutput';
import {
	FEED_DOCS_LINK,
	feedFilters,
	feedOptions,
	simplifyProperty,
} from '../../../shared/descriptions';
import { returnAllAndLimit } from '../common.descriptions';

export const description: INodeProperties[] = [
	...returnAllAndLimit,
	simplifyProperty(COMPLETION_SIMPLIFIED_FIELDS),
	{
		displayName: 'Updated Since',
		name: 'updatedSince',
		type: 'dateTime',
		default: '',
		description: `Only records that changed at or after this moment. Pick a date, or use an expression such as {{ $now.minus({ days: 1 }) }} for the last day. Leave empty to read every record (or to continue from Start From Cursor). ${FEED_DOCS_LINK}`,
	},
	{
		displayName: 'Start From Cursor',
		name: 'cursor',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.syncState.next_cursor }}',
		description: `To get only what is new or changed since an earlier run, give the bookmark that run saved (its Sync State item, turned on under Options). Leave empty on the first run. If the platform no longer accepts the bookmark, the node starts again from Updated Since and warns you. ${FEED_DOCS_LINK}`,
	},
	feedFilters(
		[],
		'Sent unchanged on every page: the cursor does not remember them, so keep them the same between runs',
	),
	feedOptions([
		{
			displayName: 'Output Sync State',
			name: 'outputSyncState',
			type: 'boolean',
			default: false,
			description: `Whether to add one extra item after the records that says where this run stopped (a bookmark, and the newest change time seen). Save it, for example in a sheet, and give the bookmark to Start From Cursor next time to get only new and changed records. ${FEED_DOCS_LINK}`,
		},
	]),
];

export const option = {
	name: 'Get Many',
	description:
		'Read completion records from the change feed, oldest change first; each completionid is output once, in its latest version',
	action: 'Get many completions',
};

/**
 * What an AI model reads about this operation when the node is its tool. The model can set only
 * what the workflow author bound with `$fromAI` (the tool copy binds nothing by default, so its
 * schema may be empty): the words say which records the workflow chose, and that the model fills
 * in only the inputs the schema lists.
 */
export const toolDescription =
	"Reads completion records from the platform's change feed, oldest change first: completionid, username, contentid, contentname, contenttype, completionstatus (Completed, In Progress, Enrolled, Archived, Viewed), timecompleted, lastupdated. The workflow sets what it reads (one course, one content type, changes since a time); give only the inputs this tool's schema lists, and call it without arguments when it lists none. At most Limit records; a last item notes when more exist.";

/** What the model is told after a read of the tool copy: only what it can act on. */
const TOOL_NOTES = {
	none: 'No completion records matched this read. If this tool takes inputs (a course, a content type, a start time), try other values; otherwise tell the user that nothing matched.',
	more: 'If this tool takes inputs (a course, a content type, a start time), narrow the read with them; otherwise tell the user that more records exist than were shown.',
};

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const read = readParameters.call(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const simplify = this.getNodeParameter('simple', itemIndex, true) as boolean;
	const result = await walkFeed.call(this, {
		filters: { ...read.filters, ...enabledFlags(options, FEED_FLAGS) },
		cursor: read.cursor || undefined,
		updatedSince: read.updatedSince,
		maxRecords: read.limit,
		itemIndex,
	});
	hintAboutWalk.call(this, result, read.limit);

	// The sync state is a trailing item rather than a second output: one output keeps the
	// node simple to wire and works unchanged when an AI agent calls it as a tool; the item
	// has a single `syncState` key so it is easy to tell apart (or read with `.last()`).
	// Simplify applies to the records only; the sync state item below is never cut down.
	const records = simplify
		? simplifyRecords(result.records, COMPLETION_SIMPLIFIED_FIELDS)
		: [...result.records];
	if (records.length === 0 && runsAsTool(this)) {
		records.push({ note: TOOL_NOTES.none });
	} else if (read.limit !== undefined && !result.reachedEnd && runsAsTool(this)) {
		records.push(moreNote(records.length, undefined, TOOL_NOTES.more));
	}
	if (options.outputSyncState === true) {
		return [...records, syncStateItem(result, read.updatedSince)];
	}
	return records;
}

/** Where the read starts and what it reads: Limit, Updated Since, Start From Cursor, Filters. */
function readParameters(this: IExecuteFunctions, itemIndex: number) {
	const limit = readLimit.call(this, itemIndex);
	const rawUpdatedSince = this.getNodeParameter('updatedSince', itemIndex, '') as unknown;
	const cursor = String(this.getNodeParameter('cursor', itemIndex, '') ?? '').trim();
	const filterValues = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;

	const updatedSince =
		rawUpdatedSince === '' || rawUpdatedSince === null || rawUpdatedSince === undefined
			? undefined
			: toFeedTimestamp(rawUpdatedSince, 'Updated Since', {
					node: this.getNode(),
					itemIndex,
					timezone: this.getTimezone(),
				});

	const filters: FeedFilters = {
		contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex),
		contentType: (filterValues.contentType as string) || undefined,
	};
	return { limit, updatedSince, cursor, filters };
}

/** Hints on the output pane: a restarted cursor, and a limit that left records unread. */
function hintAboutWalk(this: IExecuteFunctions, result: FeedWalkResult, limit: number | undefined) {
	if (result.cursorRejected) {
		this.addExecutionHints({
			type: 'warning',
			location: 'outputPane',
			message: `The API rejected the cursor from "Start From Cursor", so the feed was read again from ${result.restartedFrom} (the last known-good time). Records from that time on may repeat; upsert on "completionid".`,
		});
	}

	if (limit !== undefined && !result.reachedEnd) {
		hintOnce(this, 'moreAvailable', {
			type: 'info',
			location: 'outputPane',
			message: `Stopped at the limit of ${limit} records; the feed has more. Turn on "Return All", or continue in a later run with "Start From Cursor" (Options → "Output Sync State" gives the cursor).`,
		});
	}
}

/** The trailing `syncState` item of Options → "Output Sync State". */
function syncStateItem(result: FeedWalkResult, updatedSince: string | undefined): IDataObject {
	return {
		syncState: {
			next_cursor: result.nextCursor,
			newest_lastupdated: result.newestLastUpdated ?? updatedSince ?? null,
			reached_end: result.reachedEnd,
			records: result.records.length,
			requests: result.requests,
			cursor_rejected: result.cursorRejected,
			...(result.restartedFrom !== undefined ? { restarted_from: result.restartedFrom } : {}),
		},
	};
}
