import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { router } from './actions/router';
import { versionDescription } from './actions/versionDescription';
import { getEvents } from './methods/loadOptions';
import { searchWebhookLogs, searchWebhooks } from './methods/listSearch';
import { testLearningPlatformCredential } from './transport';

export class LearningPlatform implements INodeType {
	description: INodeTypeDescription = versionDescription;

	methods = {
		loadOptions: { getEvents },
		listSearch: { searchWebhooks, searchWebhookLogs },
		credentialTest: { learningPlatformApiTest: testLearningPlatformCredential },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
