import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { toFeedTimestamp } from '../../helpers/dates';
import type { FeedFilters } from '../../helpers/feed';
import { FEED_FLAGS, walkFeed } from '../../helpers/feed';
import { hintOnce } from '../../helpers/hints';
import { enabledFlags, optionalId, readLimit } from '../../helpers/parameters';
import { simplifyDefault, simplifyRecords } from '../../helpers/simplify';
import {
	feedContentIdFilter,
	feedContentTypeFilter,
	feedCursor,
	feedFlagOptions,
	feedUpdatedSince,
	filtersCollection,
	optionsCollection,
	outputSyncStateOption,
	returnAllAndLimit,
	simplifyProperties,
} from '../common.descriptions';

const properties: INodeProperties[] = [
	...returnAllAndLimit,
	...simplifyProperties('completion'),
	feedUpdatedSince,
	feedCursor,
	filtersCollection(
		[feedContentIdFilter, feedContentTypeFilter],
		'Sent unchanged on every page: the cursor does not remember them, so keep them the same between runs',
	),
	optionsCollection([...feedFlagOptions, outputSyncStateOption]),
];

const displayOptions = { show: { resource: ['completion'], operation: ['getMany'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const limit = readLimit.call(this, itemIndex);
	const rawUpdatedSince = this.getNodeParameter('updatedSince', itemIndex, '') as unknown;
	const cursor = String(this.getNodeParameter('cursor', itemIndex, '') ?? '').trim();
	const filterValues = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const simplify = this.getNodeParameter(
		'simple',
		itemIndex,
		simplifyDefault(this.getNode().typeVersion),
	) as boolean;

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
		...enabledFlags(options, FEED_FLAGS),
	};

	const result = await walkFeed.call(this, {
		filters,
		cursor: cursor || undefined,
		updatedSince,
		maxRecords: limit,
		itemIndex,
	});

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

	// The sync state is a trailing item rather than a second output: one output keeps the
	// node simple to wire and works unchanged when an AI agent calls it as a tool; the item
	// has a single `syncState` key so it is easy to tell apart (or read with `.last()`).
	// Simplify applies to the records only; the sync state item below is never cut down.
	const records = simplify ? simplifyRecords(result.records, 'completion') : result.records;
	if (options.outputSyncState === true) {
		return [
			...records,
			{
				syncState: {
					next_cursor: result.nextCursor,
					newest_lastupdated: result.newestLastUpdated ?? updatedSince ?? null,
					reached_end: result.reachedEnd,
					records: result.records.length,
					requests: result.requests,
					cursor_rejected: result.cursorRejected,
					...(result.restartedFrom !== undefined ? { restarted_from: result.restartedFrom } : {}),
				},
			},
		];
	}
	return records;
}
