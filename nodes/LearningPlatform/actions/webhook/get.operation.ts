import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredId } from '../../helpers/parameters';
import { maskSubscription, webhookIdLocator, webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [webhookIdLocator('The webhook subscription to get')];

const displayOptions = { show: { resource: ['webhook'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
			extractValue: true,
		});
		const subscription = (await apiRequest.call(this, 'GET', 'webhook', `/${webhookId}`, {
			itemIndex,
			...webhookNotFound(webhookId),
		})) as IDataObject;
		return maskSubscription(subscription);
	});
}
