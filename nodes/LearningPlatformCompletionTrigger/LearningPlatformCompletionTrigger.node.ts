import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { feedFilters, feedOptions, simplifyProperty } from '../shared/descriptions';
import {
	formatFeedTimestamp,
	toFeedTimestamp,
	COMPLETION_SIMPLIFIED_FIELDS,
	COMPLETION_STATUSES,
	FEED_FLAGS,
	feedFilterQuery,
	walkFeed,
	enabledFlags,
	parseId,
	simplifyRecords,
	triggerScope,
} from '../shared/helpers';
import type { FeedFilters } from '../shared/helpers';
import { clock, testLearningPlatformCredential } from '../shared/transport';
import {
	VISIBILITY_MARGIN_SECONDS,
	advanceFeedState,
	initialFeedState,
	passesStatusFilter,
	readFeedState,
	writeFeedState,
} from './feedState';
import { finishPoll, startPoll } from './pollGuard';

/** Records per feed request: the API's maximum, fewest requests against the 60/min limit. */
const FEED_PAGE_SIZE = 500;
/**
 * Most records one poll emits. A first sync from the beginning of a large tenancy then arrives
 * over several polls instead of as one huge execution; the cursor resumes exactly after the last one.
 */
const MAX_RECORDS_PER_POLL = 10_000;
/** Manual runs show this many of the newest records. */
const MANUAL_SAMPLE_SIZE = 10;
/** Manual runs look back over growing windows until enough records are found (null: all time). */
const MANUAL_WINDOWS_SECONDS: Array<number | null> = [
	600,
	3600,
	86_400,
	7 * 86_400,
	30 * 86_400,
	365 * 86_400,
	null,
];
/** ...reading at most this many pages per window, so a manual run stays quick on a busy tenancy. */
const MANUAL_MAX_PAGES_PER_WINDOW = 10;

interface TriggerSettings {
	filters: FeedFilters;
	statuses: string[];
	/** stable text of the server-side filters, to notice when they change */
	filtersKey: string;
}

function secondsAgo(seconds: number): string {
	return formatFeedTimestamp(Date.now() - seconds * 1000);
}

function readSettings(this: IPollFunctions): TriggerSettings {
	const filterValues = this.getNodeParameter('filters', {}) as IDataObject;
	const flagValues = this.getNodeParameter('options', {}) as IDataObject;
	const filters: FeedFilters = enabledFlags(flagValues, FEED_FLAGS);
	if (typeof filterValues.contentType === 'string' && filterValues.contentType !== '') {
		filters.contentType = filterValues.contentType;
	}
	// Version 1.0 of this field was a number whose empty value was 0; a saved 0 still means "any
	// content". Anything else that is not a content ID fails the poll (and so the activation)
	// instead of silently widening the filter to every record.
	const savedContentId = (this.getNode().parameters.filters as IDataObject | undefined)?.contentId;
	const contentId =
		savedContentId === 0 ? undefined : parseId.call(this, filterValues.contentId, 'Content ID', 0);
	if (contentId !== undefined) filters.contentId = contentId;
	const statuses = Array.isArray(filterValues.statuses) ? (filterValues.statuses as string[]) : [];
	const query = feedFilterQuery(filters);
	const filtersKey = JSON.stringify(
		Object.keys(query)
			.sort()
			.map((key) => [key, query[key]]),
	);
	return { filters, statuses, filtersKey };
}

/**
 * Where a first activation starts, and a text identifying that setting. "Now" is not taken from
 * this machine's clock alone (it may be ahead of the platform's): the first poll reads the last
 * minutes as a baseline and emits nothing from it, so only changes after it are emitted.
 */
function startPoint(this: IPollFunctions): { since: string; origin: string; baseline: boolean } {
	const startFrom = this.getNodeParameter('startFrom', 'now') as string;
	if (startFrom === 'beginning') return { since: '', origin: 'beginning', baseline: false };
	if (startFrom === 'date') {
		const since = toFeedTimestamp(this.getNodeParameter('startDate', ''), 'Start Date', {
			node: this.getNode(),
			timezone: this.getTimezone(),
		});
		// A fixed date that is changed starts over; an expression (e.g. based on $now) gives a new
		// value on every poll and must not restart anything.
		const raw = this.getNode().parameters.startDate;
		const isExpression = typeof raw === 'string' && raw.startsWith('=');
		return { since, origin: isExpression ? 'date:expression' : `date:${since}`, baseline: false };
	}
	return { since: secondsAgo(VISIBILITY_MARGIN_SECONDS), origin: 'now', baseline: true };
}

/**
 * A manual run: the newest records that pass the filters, read without touching the stored
 * position. The feed is oldest-first, so recent windows are tried first and each is read to its end.
 */
async function newestSample(
	this: IPollFunctions,
	settings: TriggerSettings,
): Promise<IDataObject[]> {
	const sample = new Map<string, IDataObject>();
	for (const windowSeconds of MANUAL_WINDOWS_SECONDS) {
		sample.clear();
		const updatedSince = windowSeconds === null ? undefined : secondsAgo(windowSeconds);
		let cursor: string | undefined;
		for (let page = 0; page < MANUAL_MAX_PAGES_PER_WINDOW; page++) {
			const walk = await walkFeed.call(this, {
				filters: settings.filters,
				cursor,
				updatedSince,
				pageSize: FEED_PAGE_SIZE,
				maxRecords: FEED_PAGE_SIZE,
			});
			for (const record of walk.records) {
				if (!passesStatusFilter(settings.statuses, record)) continue;
				const id = String(record.completionid);
				sample.delete(id);
				sample.set(id, record);
				if (sample.size > MANUAL_SAMPLE_SIZE) sample.delete(sample.keys().next().value as string);
			}
			// the feed's end: no new cursor handed out
			if (!walk.nextCursor || walk.nextCursor === cursor) break;
			cursor = walk.nextCursor;
		}
		if (sample.size >= MANUAL_SAMPLE_SIZE) break;
	}
	return [...sample.values()];
}

/** One scheduled poll: reads the feed from the position on, moves the position, returns what to emit. */
async function pollFeed(this: IPollFunctions, settings: TriggerSettings): Promise<IDataObject[]> {
	const staticData = this.getWorkflowStaticData('node');
	const start = startPoint.call(this);
	let state = readFeedState(staticData);
	let baseline = false;
	if (state === undefined || state.origin !== start.origin) {
		state = initialFeedState(start.since, settings.filtersKey, start.origin);
		baseline = start.baseline;
	} else if (state.filters !== settings.filtersKey) {
		// A cursor does not carry filters (spec §6 rule 4): continue by time with the new ones.
		state = { ...state, cursor: null, filters: settings.filtersKey };
	}

	const walk = await walkFeed.call(this, {
		filters: settings.filters,
		cursor: state.cursor ?? undefined,
		updatedSince: state.since || undefined,
		pageSize: FEED_PAGE_SIZE,
		maxRecords: MAX_RECORDS_PER_POLL,
	});
	const { emit, next } = advanceFeedState(state, walk, {
		statuses: settings.statuses,
		pageSize: FEED_PAGE_SIZE,
	});

	// Written only now that the walk succeeded: a poll that fails part-way keeps the old
	// position and reads the same records again. A poll without items also moves on (it
	// passed over nothing it should have emitted); n8n stores that with its next save, and
	// until then a restart just re-reads records that are skipped again.
	writeFeedState(staticData, next);

	// The baseline of "now" only marks what already happened as processed.
	return baseline ? [] : emit;
}

export class LearningPlatformCompletionTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Learning Platform Completion Trigger',
		name: 'learningPlatformCompletionTrigger',
		icon: {
			light: 'file:learningPlatformCompletion.svg',
			dark: 'file:learningPlatformCompletion.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: 'Completions feed',
		description:
			'Checks the completions feed on a schedule and starts the workflow with each new or changed completion. Needs no public URL; reacts within the poll interval. For instant events of every kind, use the Learning Platform Trigger.',
		defaults: {
			name: 'Learning Platform Completion Trigger',
		},
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'learningPlatformApi', required: true, testedBy: 'learningPlatformApiTest' },
		],
		properties: [
			{
				displayName: 'Start From',
				name: 'startFrom',
				type: 'options',
				options: [
					{
						name: 'Now',
						value: 'now',
						description: 'Only records that change after the workflow is activated',
					},
					{
						name: 'A Specific Date',
						value: 'date',
						description: 'Records changed since a date, then every later change',
					},
					{
						name: 'The Beginning',
						value: 'beginning',
						description: 'Every existing record first, then every later change',
					},
				],
				default: 'now',
				description:
					'Where the first activation starts reading. Later polls continue from where the previous one stopped; changing this setting starts over.',
			},
			{
				displayName: 'Start Date',
				name: 'startDate',
				type: 'dateTime',
				required: true,
				displayOptions: {
					show: {
						startFrom: ['date'],
					},
				},
				default: '',
				description:
					'Records changed at or after this time are emitted first. Changing the date later starts over from the new date (unless it is an expression).',
			},
			feedFilters([
				{
					displayName: 'Completion Status',
					name: 'statuses',
					type: 'multiOptions',
					options: COMPLETION_STATUSES.map((status) => ({ name: status, value: status })),
					default: [],
					description:
						'Emit only records with one of these statuses (checked in n8n, the feed has no such filter). Enrolled and In Progress records appear only with Include Enrolments (courses) or Include Not Completed.',
				},
			]),
			feedOptions(),
			simplifyProperty(COMPLETION_SIMPLIFIED_FIELDS),
		],
	};

	methods = {
		credentialTest: {
			learningPlatformApiTest: testLearningPlatformCredential,
		},
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const settings = readSettings.call(this);
		const simplify = this.getNodeParameter('simple', true) as boolean;
		const output = (records: IDataObject[]) =>
			this.helpers.returnJsonArray(
				simplify ? simplifyRecords(records, COMPLETION_SIMPLIFIED_FIELDS) : records,
			);

		if (this.getMode() === 'manual') {
			const sample = await newestSample.call(this, settings);
			return sample.length > 0 ? [output(sample)] : null;
		}

		const key = triggerScope.call(this);
		const startedAt = clock().now();
		if (!startPoll(key, startedAt)) {
			// info: n8n shows nothing else of it, and it tells of a slow platform or a clock that jumped
			this.logger.info(
				'Learning Platform Completion Trigger: the previous poll is still running; this one is skipped (the running one reads everything new)',
			);
			return null;
		}
		try {
			const emit = await pollFeed.call(this, settings);
			return emit.length > 0 ? [output(emit)] : null;
		} finally {
			finishPoll(key, startedAt);
		}
	}
}
