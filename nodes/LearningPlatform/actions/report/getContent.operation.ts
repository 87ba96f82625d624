import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { optionalId } from '../../../shared/helpers';
import { runReportForItem, type Report } from '../../helpers/reports';
import {
	contentIdFilter,
	contentTypeFilter,
	filtersCollection,
	simplifyProperty,
} from '../../../shared/descriptions';
import { toolLimitProperty } from '../../helpers/toolOutput';
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
	toolLimitProperty,
	reportOptions(),
	simplifyProperty(report.simplifiedFields),
];

export const option = {
	name: 'Get Content',
	description:
		'Run the content report (courses, Live Learning, resources, videos); use it to find content IDs',
	action: 'Get content',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	"Lists the platform's content (courses, Live Learning, resources, videos), optionally one type or one Content ID, and waits for the report. Returns contentid, fullname, contenttype, status, totalenrolments, totalcompletions, timemodified per item. Use it to find the Content ID of a course by its name. At most Limit records; a last item notes how many more there were.";

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	return await runReportForItem.call(this, itemIndex, report, [], {
		contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex),
		contentType: filters.contentType || undefined,
	});
}
