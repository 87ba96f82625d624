// UI of the report operations.
import type { INodeProperties } from 'n8n-workflow';

import { optionsCollection } from '../../../shared/descriptions';
import { DEFAULT_TIMEOUT_SECONDS } from '../../helpers/reports';

const reportWaitOptions: INodeProperties[] = [
	{
		displayName: 'Wait for Result',
		name: 'waitForResult',
		type: 'boolean',
		default: true,
		description:
			'Whether to wait until the report is ready and output its records. When off, the node outputs {requestid, status} at once; fetch the records later with the "Get Result" operation.',
	},
	{
		displayName: 'Timeout (Seconds)',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_TIMEOUT_SECONDS,
		description:
			'How long to wait for the report before failing. The error names the request ID so the result can still be fetched later with "Get Result".',
	},
];

/** The "Options" collection of the report operations: their own flags, then waiting. */
export function reportOptions(...flags: INodeProperties[]): INodeProperties {
	return optionsCollection([...flags, ...reportWaitOptions]);
}
