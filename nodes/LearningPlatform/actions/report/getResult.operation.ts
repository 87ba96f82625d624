import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { requiredId } from '../../helpers/parameters';
import type { ReportType } from '../../helpers/reports';
import { pollReport, readWaitOptions } from '../../helpers/reports';
import { reportOptions } from '../common.descriptions';

const properties: INodeProperties[] = [
	{
		displayName: 'Report Type',
		name: 'reportType',
		type: 'options',
		options: [
			{ name: 'Activity Completions', value: 'activitycompletions' },
			{ name: 'Attendance', value: 'attendance' },
			{ name: 'Content', value: 'content' },
		],
		default: 'activitycompletions',
		required: true,
		description: 'The kind of report the request ID belongs to',
	},
	{
		displayName: 'Request ID',
		name: 'requestId',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. 5521',
		description:
			'The "requestid" returned by an earlier report operation (with "Wait for Result" off, or named in a timeout error)',
	},
	reportOptions(),
];

const displayOptions = { show: { resource: ['report'], operation: ['getResult'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const reportType = this.getNodeParameter('reportType', itemIndex) as ReportType;
	const requestId = requiredId.call(this, 'requestId', 'Request ID', itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	return await pollReport.call(
		this,
		reportType,
		undefined,
		requestId,
		readWaitOptions(options),
		itemIndex,
	);
}
