import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/**
 * Fields that several operations show alike. Each operation still places them with its own
 * `updateDisplayOptions` (which copies them), so one definition serves every place.
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
	return returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
}
