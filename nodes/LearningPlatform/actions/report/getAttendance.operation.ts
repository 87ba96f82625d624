import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { optionalId } from '../../../shared/helpers';
import { runReportForItem, type Report } from '../../helpers/reports';
import {
	contentFieldsOption,
	contentIdFilter,
	filtersCollection,
	showSuspendedOption,
	simplifyProperty,
	userFieldsOption,
} from '../../../shared/descriptions';
import { toolLimitProperty } from '../../helpers/toolOutput';
import { reportOptions } from './report.descriptions';

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

export const report: Report = {
	type: 'attendance',
	label: 'Attendance',
	simplifiedFields: [
		'username',
		'contentid',
		'contentname',
		'sessionid',
		'eventname',
		'sessionstarttime',
		'attendancestatus',
	],
};

export const description: INodeProperties[] = [
	filtersCollection([
		contentIdFilter('Only attendance of this Live Learning content (numeric ID)'),
	]),
	toolLimitProperty,
	reportOptions(...flagOptions),
	simplifyProperty(report.simplifiedFields),
];

export const option = {
	name: 'Get Attendance',
	description: 'Run the Live Learning attendance report; outputs one item per learner and session',
	action: 'Get attendance',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Runs the Live Learning attendance report, optionally for one Live Learning course (Content ID), and waits for it. Returns one record per learner and session: username, contentid, contentname, sessionid, eventname, sessionstarttime, attendancestatus (Attended, Did Not Attend). At most Limit records; a last item notes how many more there were.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await runReportForItem.call(
		this,
		itemIndex,
		report,
		flagOptions.map((flag) => flag.name),
		{ contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex) },
	);
}
