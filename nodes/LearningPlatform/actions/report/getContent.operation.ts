import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { contentTypeOptions } from '../../helpers/fields';
import { optionalId } from '../../helpers/parameters';
import { reportOptions, runReportPerItem } from '../../helpers/reports';
import { simplifyProperties } from '../common.descriptions';

const flagOptions: INodeProperties[] = [];

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
				description: 'Only this content item (numeric ID)',
			},
			{
				displayName: 'Content Type',
				name: 'contentType',
				type: 'options',
				options: contentTypeOptions,
				default: 'course',
				description: 'Only content of this type',
			},
		],
	},
	reportOptions(...flagOptions),
	...simplifyProperties('content'),
];

const displayOptions = { show: { resource: ['report'], operation: ['getContent'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runReportPerItem.call(this, 'content', flagOptions, function (itemIndex) {
		const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
		return {
			contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex),
			contentType: filters.contentType || undefined,
		};
	});
}
