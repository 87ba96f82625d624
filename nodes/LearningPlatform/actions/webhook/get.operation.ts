import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { requiredId } from '../../helpers/parameters';
import { maskSubscription, webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../transport';
import { webhookIdLocator } from '../common.descriptions';

const properties: INodeProperties[] = [webhookIdLocator('The webhook subscription to get')];

const displayOptions = { show: { resource: ['webhook'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	const subscription = (await apiRequest.call(this, 'GET', 'webhook', `/${webhookId}`, {
		itemIndex,
		...webhookNotFound(webhookId),
	})) as IDataObject;
	return maskSubscription(subscription);
}
