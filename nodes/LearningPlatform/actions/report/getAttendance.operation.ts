import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { optionalId } from '../../helpers/parameters';
import { runReportForItem, type Report } from '../../helpers/reports';
import {
	contentFieldsOption,
	contentIdFilter,
	filtersCollection,
	showSuspendedOption,
	simplifyProperties,
	userFieldsOption,
} from '../../../shared/descriptions';
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
	reportOptions(...flagOptions),
	...simplifyProperties(report.simplifiedFields),
];

export const option = {
	name: 'Get Attendance',
	description: 'Run the Live Learning attendance report; outputs one item per learner and session',
	action: 'Get attendance',
};

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await runReportForItem.call(
		this,
		itemIndex,
		report,
		flagOptions.map((flag) => flag.name),
		{ contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex) },
	);
}
