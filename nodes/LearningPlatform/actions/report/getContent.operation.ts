import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { optionalId } from '../../helpers/parameters';
import { runReportForItem, type Report } from '../../helpers/reports';
import {
	contentIdFilter,
	contentTypeFilter,
	filtersCollection,
	simplifyProperties,
} from '../../../shared/descriptions';
import { reportOptions } from './report.descriptions';

export const report: Report = {
	type: 'content',
	label: 'Content',
	simplifiedFields: [
		'contentid',
		'fullname',
		'contenttype',
		'status',
		'totalenrolments',
		'totalcompletions',
		'timemodified',
	],
};

export const description: INodeProperties[] = [
	filtersCollection([
		contentIdFilter('Only this content item (numeric ID)'),
		contentTypeFilter('Only content of this type'),
	]),
	reportOptions(),
	...simplifyProperties(report.simplifiedFields),
];

export const option = {
	name: 'Get Content',
	description:
		'Run the content report (courses, Live Learning, resources, videos); use it to find content IDs',
	action: 'Get content',
};

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	return await runReportForItem.call(this, itemIndex, report, [], {
		contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex),
		contentType: filters.contentType || undefined,
	});
}
