// UI that several nodes of this package show alike (the action node, the Completion Trigger and
// the webhook trigger). UI used by one resource lives with that resource, in its actions folder.
// `updateDisplayOptions` copies a field before adding displayOptions, so one object serves all.
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { triggerEventOptions } from './helpers';

export const FEED_DOCS_LINK =
	'<a href="https://github.com/n8n-nodes-learning-platform/n8n-nodes-learning-platform/blob/main/docs/nodes.md#learning-platform-node">How the feed works</a>';

/** The Simplify parameter (`simple`), on by default: records keep only `keptFields`. */
export function simplifyProperty(keptFields: readonly string[]): INodeProperties {
	return {
		displayName: 'Simplify',
		name: 'simple',
		type: 'boolean',
		default: true,
		description: 'Whether to return a simplified version of the response instead of the raw data',
		hint: `Simplified records keep only: ${keptFields.join(', ')}`,
	};
}

/** The content types as the bookmark, the content report and the completions feed take them. */
export const contentTypeOptions: INodePropertyOptions[] = [
	{ name: 'Course', value: 'course' },
	{ name: 'Live Learning', value: 'live learning' },
	{ name: 'Resource', value: 'resource' },
	{ name: 'Video', value: 'video' },
];

/** A numeric-ID filter: a text field (expressions, pasted values), read with `optionalId`. */
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

// The completions feed: Completion → Get Many and the Completion Trigger.

/** The feed's "Filters": content ID and type (sent on every page), after any of the node's own. */
export function feedFilters(own: INodeProperties[] = [], description?: string): INodeProperties {
	return filtersCollection(
		[
			...own,
			contentIdFilter('Only records of this content (numeric ID)'),
			contentTypeFilter('Only records of this content type'),
		],
		description,
	);
}

/** The feed's "Options": its on/off flags, then any of the node's own. */
export function feedOptions(own: INodeProperties[] = []): INodeProperties {
	return optionsCollection([...feedFlagOptions, ...own]);
}

/** The feed's on/off flags (helpers/feed.ts FEED_FLAGS), sorted by label. */
const feedFlagOptions: INodeProperties[] = [
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

/**
 * The `event` field: from the API's list (load options) in the action node; `fixedList` gives the
 * spec's events as a fixed list named "Event", which n8n's node picker shows one entry per event
 * for (the webhook trigger).
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
