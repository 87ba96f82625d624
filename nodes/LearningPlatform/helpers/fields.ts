import type { IExecuteFunctions, INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Fields that several operations (and the completion trigger) show alike. `updateDisplayOptions`
 * copies a field before adding an operation's displayOptions, so one object serves every place.
 */

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

/** The record cap from `returnAllAndLimit`; undefined means read to the end. */
export function readLimit(this: IExecuteFunctions, itemIndex: number): number | undefined {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	if (returnAll) return undefined;
	const limit = this.getNodeParameter('limit', itemIndex, 50) as unknown;
	// the field's minimum holds in the editor only: an expression can still give 0, -5 or 'ten'
	if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
		throw new NodeOperationError(
			this.getNode(),
			`"Limit" must be a whole number of at least 1, got ${JSON.stringify(limit)}`,
			{
				itemIndex,
				description: 'Set a positive limit, or turn on "Return All" to get every record.',
			},
		);
	}
	return limit;
}

/** The content types as the bookmark, the content report and the completions feed take them. */
export const contentTypeOptions: INodePropertyOptions[] = [
	{ name: 'Course', value: 'course' },
	{ name: 'Live Learning', value: 'live learning' },
	{ name: 'Resource', value: 'resource' },
	{ name: 'Video', value: 'video' },
];

/* On/off options that the reports and the completions feed both take, each sent only when on. */

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

/** The flags among `names` that are on, each as `true`: the API reads an absent flag as off. */
export function enabledFlags<Flag extends string>(
	values: Partial<Record<Flag, unknown>>,
	names: readonly Flag[],
): Partial<Record<Flag, true>> {
	const flags: Partial<Record<Flag, true>> = {};
	for (const name of names) if (values[name] === true) flags[name] = true;
	return flags;
}
