import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import * as bookmark from './bookmark/Bookmark.resource';
import * as completion from './completion/Completion.resource';
import * as report from './report/Report.resource';
import type { Resource } from './router';
import * as webhook from './webhook/Webhook.resource';

// keyed by the router's resources: a resource without an entry, or an entry without a resource,
// does not compile
const resourceOptions: Record<Resource, Omit<INodePropertyOptions, 'value'>> = {
	bookmark: { name: 'Bookmark', description: 'Bookmarks of content for learners' },
	completion: {
		name: 'Completion',
		description: 'Completion records from the change feed (synchronous, cursor-paged)',
	},
	report: {
		name: 'Report',
		description: 'Asynchronous reports: activity completions, attendance, content',
	},
	webhook: {
		name: 'Webhook',
		description: 'Webhook subscriptions, their delivery logs and sample events',
	},
};

/**
 * The parameters: the resource picker, then each resource's operation picker and fields. The
 * node-level description (name, icon, credentials, usableAsTool...) sits in the node class, where
 * n8n's linters look for it.
 */
export const properties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: Object.entries(resourceOptions).map(([value, option]) => ({ ...option, value })),
		default: 'report',
	},
	...report.description,
	...bookmark.description,
	...completion.description,
	...webhook.description,
];
