import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { requiredId } from '../../../shared/helpers';
import { REPORT_ADVICE, pollReport, readWaitOptions } from '../../helpers/reports';
import { boundedForModel, toolLimitProperty } from '../../helpers/toolOutput';
import { reportOptions } from './report.descriptions';
import { REPORTS } from './reports';

export const description: INodeProperties[] = [
	{
		displayName: 'Report Type',
		name: 'reportType',
		type: 'options',
		options: REPORTS.map((report) => ({ name: report.label, value: report.type })),
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
	toolLimitProperty,
	reportOptions(),
];

export const option = {
	name: 'Get Result',
	description: 'Fetch the records of an earlier report request by its request ID',
	action: 'Get report result',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Fetches the records of an earlier report request by its Request ID and Report Type (activitycompletions, attendance or content); waits while it is still processing. Only useful after a report ran out of time and named its request ID.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const reportType = this.getNodeParameter('reportType', itemIndex) as string;
	const report = REPORTS.find((candidate) => candidate.type === reportType);
	if (!report) {
		const known = REPORTS.map((candidate) => candidate.type).join(', ');
		throw new NodeOperationError(
			this.getNode(),
			`"Report Type" must be one of ${known}, got "${reportType}"`,
			{ itemIndex },
		);
	}
	const requestId = requiredId.call(this, 'requestId', 'Request ID', itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const records = await pollReport.call(
		this,
		report,
		undefined,
		requestId,
		readWaitOptions(options),
		itemIndex,
	);
	return boundedForModel.call(this, itemIndex, records, REPORT_ADVICE);
}
