import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { contentFieldsOption, enabledFlags, showSuspendedOption, userFieldsOption } from '../../helpers/fields';
import { optionalId } from '../../helpers/parameters';
import { readWaitOptions, runReport, waitOptions } from '../../helpers/reports';

const properties: INodeProperties[] = [
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Content ID',
				name: 'contentId',
				type: 'string',
				default: '',
				description: 'Only attendance of this Live Learning content (numeric ID)',
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			contentFieldsOption,
			{
				displayName: 'Include Custom Session Fields',
				name: 'sessionFields',
				type: 'boolean',
				default: false,
				description: 'Whether to add the session\'s custom fields as a "sessiondata" object',
			},
			userFieldsOption,
			showSuspendedOption,
			...waitOptions,
		],
	},
];

const displayOptions = { show: { resource: ['report'], operation: ['getAttendance'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
		const contentId = optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex);
		const qs: IDataObject = {
			...(contentId !== undefined ? { contentId } : {}),
			...enabledFlags(options, ['showSuspended', 'userFields', 'contentFields', 'sessionFields']),
		};
		return await runReport.call(this, 'attendance', qs, readWaitOptions(options), itemIndex);
	});
}
