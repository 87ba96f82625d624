import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { requiredId } from '../../../shared/helpers';
import { webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { webhookIdLocator } from './webhook.descriptions';

export const description: INodeProperties[] = [
	webhookIdLocator('The webhook subscription to delete; it stops receiving deliveries at once'),
];

export const option = {
	name: 'Delete',
	description: 'Delete a webhook subscription so it receives nothing more',
	action: 'Delete a webhook subscription',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Deletes one webhook subscription by its numeric Webhook ID; it receives nothing more.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	await apiRequest.call(this, 'DELETE', 'webhook', `/${webhookId}`, {
		itemIndex,
		...webhookNotFound(webhookId),
	});
	// 204 with an empty body: confirm with the id so the workflow can tell which one went
	return { deleted: true, id: webhookId };
}
