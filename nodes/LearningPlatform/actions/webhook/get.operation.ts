import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { requiredId, maskSubscription } from '../../../shared/helpers';
import { webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { webhookIdLocator } from './webhook.descriptions';

export const description: INodeProperties[] = [webhookIdLocator('The webhook subscription to get')];

export const option = {
	name: 'Get',
	description: 'Get one webhook subscription (secrets masked)',
	action: 'Get a webhook subscription',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Gets one webhook subscription of the learning platform by its numeric Webhook ID (secrets masked).';

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
