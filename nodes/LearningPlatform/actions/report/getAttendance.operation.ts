import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { contentFieldsOption, showSuspendedOption, userFieldsOption } from '../../helpers/fields';
import { optionalId } from '../../helpers/parameters';
import { reportOptions, runReportPerItem } from '../../helpers/reports';
import { simplifyProperties } from '../common.descriptions';

const flagOptions: INodeProperties[] = [
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
];

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
	reportOptions(...flagOptions),
	...simplifyProperties('attendance'),
];

const displayOptions = { show: { resource: ['report'], operation: ['getAttendance'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runReportPerItem.call(this, 'attendance', flagOptions, function (itemIndex) {
		return { contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex) };
	});
}
