import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionalId } from '../../helpers/parameters';
import { runReportForItem } from '../../helpers/reports';
import {
	contentIdFilter,
	contentTypeFilter,
	filtersCollection,
	reportOptions,
	simplifyProperties,
} from '../common.descriptions';

const properties: INodeProperties[] = [
	filtersCollection([
		contentIdFilter('Only this content item (numeric ID)'),
		contentTypeFilter('Only content of this type'),
	]),
	reportOptions(),
	...simplifyProperties('content'),
];

const displayOptions = { show: { resource: ['report'], operation: ['getContent'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	return await runReportForItem.call(this, itemIndex, 'content', [], {
		contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex),
		contentType: filters.contentType || undefined,
	});
}
