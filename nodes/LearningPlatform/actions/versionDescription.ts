import type { INodeProperties } from 'n8n-workflow';

import * as bookmark from './bookmark/Bookmark.resource';
import * as completion from './completion/Completion.resource';
import * as report from './report/Report.resource';
import * as webhook from './webhook/Webhook.resource';

/**
 * The parameters of version 1: the resource picker, then each resource's operation picker and
 * fields. The node-level description (name, icon, credentials, usableAsTool...) sits in the node
 * class, where n8n's linters look for it.
 */
export const versionProperties: INodeProperties[] = [
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
];
