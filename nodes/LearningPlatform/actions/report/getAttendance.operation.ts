import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionalId } from '../../helpers/parameters';
import { runReportForItem } from '../../helpers/reports';
import {
	contentFieldsOption,
	contentIdFilter,
	filtersCollection,
	reportOptions,
	showSuspendedOption,
	simplifyProperties,
	userFieldsOption,
} from '../common.descriptions';

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
	filtersCollection([
		contentIdFilter('Only attendance of this Live Learning content (numeric ID)'),
	]),
	reportOptions(...flagOptions),
	...simplifyProperties('attendance'),
];

const displayOptions = { show: { resource: ['report'], operation: ['getAttendance'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await runReportForItem.call(
		this,
		itemIndex,
		'attendance',
		flagOptions.map((flag) => flag.name),
		{ contentId: optionalId.call(this, 'filters.contentId', 'Content ID', itemIndex) },
	);
}
