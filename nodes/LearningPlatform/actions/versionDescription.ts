/* eslint-disable n8n-nodes-base/node-filename-against-convention */
import type { INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import * as bookmark from './bookmark/Bookmark.resource';
import * as completion from './completion/Completion.resource';
import * as report from './report/Report.resource';
import * as webhook from './webhook/Webhook.resource';

export const versionDescription: INodeTypeDescription = {
	displayName: 'Learning Platform',
	name: 'learningPlatform',
	icon: { light: 'file:learningPlatform.svg', dark: 'file:learningPlatform.dark.svg' },
	group: ['input'],
	version: 1,
	subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
	description:
		'Read learning records (activity completions, attendance, content, the completions change feed), create bookmarks and manage webhook subscriptions of a learning platform',
	documentationUrl:
		'https://github.com/n8n-nodes-learning-platform/n8n-nodes-learning-platform#learning-platform-node',
	defaults: { name: 'Learning Platform' },
	usableAsTool: true,
	inputs: [NodeConnectionTypes.Main],
	outputs: [NodeConnectionTypes.Main],
	credentials: [{ name: 'learningPlatformApi', required: true, testedBy: 'learningPlatformApiTest' }],
	properties: [
		{
			displayName: 'Resource',
			name: 'resource',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Bookmark',
					value: 'bookmark',
					description: 'Bookmarks of content for learners',
				},
				{
					name: 'Completion',
					value: 'completion',
					description: 'Completion records from the change feed (synchronous, cursor-paged)',
				},
				{
					name: 'Report',
					value: 'report',
					description: 'Asynchronous reports: activity completions, attendance, content',
				},
				{
					name: 'Webhook',
					value: 'webhook',
					description: 'Webhook subscriptions, their delivery logs and sample events',
				},
			],
			default: 'report',
		},
		...report.description,
		...bookmark.description,
		...completion.description,
		...webhook.description,
	],
};
