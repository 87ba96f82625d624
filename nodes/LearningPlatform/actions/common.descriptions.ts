import type {
	INodeProperties,
	INodePropertyModeValidation,
	INodePropertyOptions,
} from 'n8n-workflow';

import { triggerEventOptions } from '../helpers/events';
import { DEFAULT_TIMEOUT_SECONDS } from '../helpers/reports';
import {
	SIMPLIFIED_FIELDS,
	SIMPLIFY_VERSION,
	type SimplifiedRecordType,
} from '../helpers/simplify';

/**
 * The UI that several operations (and the two triggers) show alike. An operation file holds its
 * own fields and its logic; whatever it shares with another one is built here.
 * `updateDisplayOptions` copies a field before adding an operation's displayOptions, so one
 * object serves every place.
 */

const FEED_DOCS_LINK =
	'<a href="https://github.com/n8n-nodes-learning-platform/n8n-nodes-learning-platform#learning-platform-node">How the feed works</a>';

// ---- Simplify -----------------------------------------------------------------------------------

// Simplify (n8n UX guideline: outputs with more than 10 fields offer it); see helpers/simplify.ts.

/**
 * The Simplify parameter (`simple`), as two entries: off by default on version 1, on from 1.1.
 * Operations add their resource/operation with `updateDisplayOptions`, which keeps `@version`.
 */
export function simplifyProperties(recordType: SimplifiedRecordType): INodeProperties[] {
	const simplify: INodeProperties = {
		displayName: 'Simplify',
		name: 'simple',
		type: 'boolean',
		default: true,
		description: 'Whether to return a simplified version of the response instead of the raw data',
		hint: `Simplified records keep only: ${SIMPLIFIED_FIELDS[recordType].join(', ')}`,
		displayOptions: { show: { '@version': [{ _cnd: { gte: SIMPLIFY_VERSION } }] } },
	};
	// Version 1 predates Simplify: off unless switched on, so saved workflows keep their output.
	const simplifyV1: INodeProperties = {
		...simplify,
		default: false,
		displayOptions: { show: { '@version': [1] } },
	};
	return [simplifyV1, simplify];
}

// ---- Lists ------------------------------------------------------------------------------------

export const returnAllAndLimit: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		displayOptions: { show: { returnAll: [false] } },
		description: 'Max number of results to return',
	},
];

// ---- Filters ----------------------------------------------------------------------------------

/** The content types as the bookmark, the content report and the completions feed take them. */
export const contentTypeOptions: INodePropertyOptions[] = [
	{ name: 'Course', value: 'course' },
	{ name: 'Live Learning', value: 'live learning' },
	{ name: 'Resource', value: 'resource' },
	{ name: 'Video', value: 'video' },
];

/**
 * A numeric-ID filter. IDs are text fields (expressions and pasted values work); the operation
 * reads them with `optionalId`, which refuses anything but a positive whole number.
 */
export function idFilter(displayName: string, name: string, description: string): INodeProperties {
	return { displayName, name, type: 'string', default: '', description };
}

export function contentIdFilter(description: string): INodeProperties {
	return idFilter('Content ID', 'contentId', description);
}

/** The Content Type filter; `overrides` for a report that spells the types its own way. */
export function contentTypeFilter(
	description: string,
	overrides: Partial<Pick<INodeProperties, 'options' | 'default'>> = {},
): INodeProperties {
	return {
		displayName: 'Content Type',
		name: 'contentType',
		type: 'options',
		options: contentTypeOptions,
		default: 'course',
		description,
		...overrides,
	};
}

/** A "Filters" collection. */
export function filtersCollection(
	options: INodeProperties[],
	description?: string,
): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		...(description ? { description } : {}),
		options,
	};
}

/** An "Options" collection. */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options,
	};
}

// On/off options that the reports and the completions feed both take, each sent only when on.

export const contentFieldsOption: INodeProperties = {
	displayName: 'Include Custom Content Fields',
	name: 'contentFields',
	type: 'boolean',
	default: false,
	description: 'Whether to add the content\'s custom fields as a "contentdata" object',
};

export const userFieldsOption: INodeProperties = {
	displayName: 'Include Custom User Fields',
	name: 'userFields',
	type: 'boolean',
	default: false,
	description: 'Whether to add each learner\'s custom user fields as a "userdata" object',
};

export const showSuspendedOption: INodeProperties = {
	displayName: 'Include Suspended Users',
	name: 'showSuspended',
	type: 'boolean',
	default: false,
	description: 'Whether to include learners whose accounts are suspended',
};

// ---- The completions feed (Completion → Get Many and the Completion Trigger) ---------------------

export const feedContentTypeFilter = contentTypeFilter('Only records of this content type');

export const feedContentIdFilter = contentIdFilter('Only records of this content (numeric ID)');

/** The feed's on/off flags (helpers/feed.ts FEED_FLAGS), sorted by label. */
export const feedFlagOptions: INodeProperties[] = [
	contentFieldsOption,
	userFieldsOption,
	{
		displayName: 'Include Enrolments',
		name: 'includeEnrolments',
		type: 'boolean',
		default: false,
		description:
			'Whether course records also include enrolled and in-progress learners (Live Learning needs "Include Not Completed")',
	},
	{
		displayName: 'Include Not Completed',
		name: 'showNotCompleted',
		type: 'boolean',
		default: false,
		description: 'Whether to include records not completed yet (enrolled or in progress)',
	},
	showSuspendedOption,
];

export const feedUpdatedSince: INodeProperties = {
	displayName: 'Updated Since',
	name: 'updatedSince',
	type: 'dateTime',
	default: '',
	description: `Only records that changed at or after this moment. Pick a date, or use an expression such as {{ $now.minus({ days: 1 }) }} for the last day. Leave empty to read every record (or to continue from Start From Cursor). ${FEED_DOCS_LINK}`,
};

export const feedCursor: INodeProperties = {
	displayName: 'Start From Cursor',
	name: 'cursor',
	type: 'string',
	default: '',
	placeholder: 'e.g. {{ $json.syncState.next_cursor }}',
	description: `To get only what is new or changed since an earlier run, give the bookmark that run saved (its Sync State item, turned on under Options). Leave empty on the first run. If the platform no longer accepts the bookmark, the node starts again from Updated Since and warns you. ${FEED_DOCS_LINK}`,
};

export const outputSyncStateOption: INodeProperties = {
	displayName: 'Output Sync State',
	name: 'outputSyncState',
	type: 'boolean',
	default: false,
	description: `Whether to add one extra item after the records that says where this run stopped (a bookmark, and the newest change time seen). Save it, for example in a sheet, and give the bookmark to Start From Cursor next time to get only new and changed records. ${FEED_DOCS_LINK}`,
};

// ---- Reports ----------------------------------------------------------------------------------

const reportWaitOptions: INodeProperties[] = [
	{
		displayName: 'Wait for Result',
		name: 'waitForResult',
		type: 'boolean',
		default: true,
		description:
			'Whether to wait until the report is ready and output its records. When off, the node outputs {requestid, status} at once; fetch the records later with the "Get Result" operation.',
	},
	{
		displayName: 'Timeout (Seconds)',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_TIMEOUT_SECONDS,
		description:
			'How long to wait for the report before failing. The error names the request ID so the result can still be fetched later with "Get Result".',
	},
];

/** The "Options" collection of the four report operations: their own flags, then waiting. */
export function reportOptions(...flags: INodeProperties[]): INodeProperties {
	return optionsCollection([...flags, ...reportWaitOptions]);
}

// ---- Webhooks ---------------------------------------------------------------------------------

/**
 * The `event` field. From the API's list (load options, with the spec's list as fallback) in the
 * action node; `fixedList` gives the spec's events as a fixed list named "Event", which the node
 * picker shows one entry per event for (the trigger).
 */
export function eventPicker(options: {
	description: string;
	required?: boolean;
	fixedList?: { hint?: string };
}): INodeProperties {
	if (options.fixedList) {
		return {
			displayName: 'Event',
			name: 'event',
			type: 'options',
			options: triggerEventOptions(),
			required: true,
			default: 'Events\\Courses\\Completion_created',
			...(options.fixedList.hint ? { hint: options.fixedList.hint } : {}),
			description: options.description,
		};
	}
	return {
		displayName: 'Event Name or ID',
		name: 'event',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getEvents' },
		default: '',
		...(options.required ? { required: true } : {}),
		description: `${options.description} Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>`,
	};
}

/** A locator's typed ID must be a whole number (spaces around it are trimmed when read). */
function wholeNumberValidation(errorMessage: string): INodePropertyModeValidation[] {
	return [{ type: 'regex', properties: { regex: '^\\s*\\d+\\s*$', errorMessage } }];
}

/** A resource locator: pick from a searchable list (`searchListMethod`), or type the ID. */
function idLocator(locator: {
	displayName: string;
	name: string;
	searchListMethod: string;
	listPlaceholder: string;
	idPlaceholder: string;
	what: string;
	description: string;
}): INodeProperties {
	return {
		displayName: locator.displayName,
		name: locator.name,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: locator.description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: locator.listPlaceholder,
				typeOptions: { searchListMethod: locator.searchListMethod, searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: locator.idPlaceholder,
				validation: wholeNumberValidation(`The ${locator.what} is a whole number`),
			},
		],
	};
}

/** The `webhookId` locator: a subscription from a searchable list, or by ID. */
export function webhookIdLocator(description: string): INodeProperties {
	return idLocator({
		displayName: 'Webhook',
		name: 'webhookId',
		searchListMethod: 'searchWebhooks',
		listPlaceholder: 'Select a webhook subscription...',
		idPlaceholder: 'e.g. 12',
		what: 'webhook ID',
		description,
	});
}

/** The `logId` locator: a delivery log entry of the chosen subscription. */
export function logIdLocator(description: string): INodeProperties {
	return idLocator({
		displayName: 'Delivery Log Entry',
		name: 'logId',
		searchListMethod: 'searchWebhookLogs',
		listPlaceholder: 'Select a delivery...',
		idPlaceholder: 'e.g. 345',
		what: 'log ID',
		description,
	});
}

/** Subscription fields shared by create (as "Additional Fields") and update ("Update Fields"). */
export const subscriptionOptionFields: INodeProperties[] = [
	{
		displayName: 'Auth Token',
		name: 'auth_token',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Bearer token the platform sends as "Authorization: Bearer &lt;token&gt;" with each delivery, so the receiver can check the caller',
	},
	// The two display-only labels keep their parameter names and their place in the collection,
	// so workflows that set them keep working; like every collection field, they are sent only
	// when added.
	{
		displayName: 'Auth Type Label (Display Only)',
		name: 'auth_type',
		type: 'options',
		options: [
			{ name: 'Bearer', value: 'bearer' },
			{ name: 'HMAC', value: 'hmac' },
			{ name: 'Both', value: 'both' },
		],
		default: 'hmac',
		description:
			"A note stored with the subscription and shown in the platform's lists; it changes nothing. Deliveries are signed when a Signing Key is set and carry the Auth Token when one is set, whatever this label says.",
	},
	{
		displayName: 'Content Type Label (Display Only)',
		name: 'content_type_header',
		type: 'options',
		options: [
			{ name: 'JSON', value: 'application/json' },
			{ name: 'Form URL-Encoded', value: 'application/x-www-form-urlencoded' },
		],
		default: 'application/json',
		description:
			'A note stored with the subscription; it changes nothing. Deliveries are always sent as JSON, whatever this label says.',
	},
	{
		displayName: 'Enabled',
		name: 'is_enabled',
		type: 'boolean',
		default: true,
		description:
			'Whether the subscription receives deliveries. A disabled subscription receives nothing.',
	},
	{
		displayName: 'Signing Key',
		name: 'signing_key',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Secret for HMAC-SHA256 signatures: each delivery then carries an X-Signature header computed with it',
	},
];
