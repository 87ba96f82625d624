import type { INodeProperties } from 'n8n-workflow';

import * as getActivityCompletions from './getActivityCompletions.operation';
import * as getAttendance from './getAttendance.operation';
import * as getContent from './getContent.operation';
import * as getResult from './getResult.operation';

export { getActivityCompletions, getAttendance, getContent, getResult };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['report'] } },
		options: [
			{
				name: 'Get Activity Completions',
				value: 'getActivityCompletions',
				description:
					'Run the activity completions report for a learner and/or a content item; outputs one item per completed activity',
				action: 'Get activity completions',
			},
			{
				name: 'Get Attendance',
				value: 'getAttendance',
				description:
					'Run the Live Learning attendance report; outputs one item per learner and session',
				action: 'Get attendance',
			},
			{
				name: 'Get Content',
				value: 'getContent',
				description:
					'Run the content report (courses, Live Learning, resources, videos); use it to find content IDs',
				action: 'Get content',
			},
			{
				name: 'Get Result',
				value: 'getResult',
				description: 'Fetch the records of an earlier report request by its request ID',
				action: 'Get report result',
			},
		],
		default: 'getActivityCompletions',
	},
	...getActivityCompletions.description,
	...getAttendance.description,
	...getContent.description,
	...getResult.description,
];
