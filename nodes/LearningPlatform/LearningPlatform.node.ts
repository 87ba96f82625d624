import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { router } from './actions/router';
import { properties } from './actions/description';
import { searchWebhookLogs, searchWebhooks } from './methods/listSearch';
import { getEvents } from '../shared/methods';
import { testLearningPlatformCredential } from '../shared/transport';

export class LearningPlatform implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Learning Platform',
		name: 'learningPlatform',
		icon: { light: 'file:learningPlatform.svg', dark: 'file:learningPlatform.dark.svg' },
		group: ['input'],
		version: 1,
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description:
			'Read learning records (activity completions, attendance, content, the completions change feed), create bookmarks and manage webhook subscriptions of a learning platform',
		documentationUrl:
			'https://github.com/n8n-nodes-learning-platform/n8n-nodes-learning-platform/blob/main/docs/nodes.md#learning-platform-node',
		defaults: { name: 'Learning Platform' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'learningPlatformApi', required: true, testedBy: 'learningPlatformApiTest' },
		],
		properties,
	};

	methods = {
		loadOptions: { getEvents },
		listSearch: { searchWebhooks, searchWebhookLogs },
		credentialTest: { learningPlatformApiTest: testLearningPlatformCredential },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
