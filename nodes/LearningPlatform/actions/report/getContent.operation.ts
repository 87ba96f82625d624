import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { contentTypeOptions } from '../../helpers/fields';
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
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [...waitOptions],
	},
];

const displayOptions = { show: { resource: ['report'], operation: ['getContent'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
		const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
		const contentId = optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex);
		const qs: IDataObject = {
			...(contentId !== undefined ? { contentId } : {}),
			...(filters.contentType ? { contentType: filters.contentType } : {}),
		};
		return await runReport.call(this, 'content', qs, readWaitOptions(options), itemIndex);
	});
}
