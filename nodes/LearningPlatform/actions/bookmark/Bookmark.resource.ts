import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';

export { create };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['bookmark'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Bookmark a content item for a learner (one bookmark per input item)',
				action: 'Create a bookmark',
			},
		],
		default: 'create',
	},
	...create.description,
];
