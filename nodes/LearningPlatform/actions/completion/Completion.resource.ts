import type { INodeProperties } from 'n8n-workflow';

import * as getMany from './getMany.operation';

export { getMany };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['completion'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getMany',
				description:
					'Read completion records from the change feed, oldest change first; each completionid is output once, in its latest version',
				action: 'Get many completions',
			},
		],
		default: 'getMany',
	},
	...getMany.description,
];
