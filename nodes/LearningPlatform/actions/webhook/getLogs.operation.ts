import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { readLimit, requiredId } from '../../../shared/helpers';
import { webhookNotFound } from '../../helpers/webhooks';
import { listAll } from '../../../shared/transport';
import { returnAllAndLimit } from '../common.descriptions';
import { webhookIdLocator } from './webhook.descriptions';

export const description: INodeProperties[] = [
	webhookIdLocator('The webhook subscription whose delivery log to read'),
	...returnAllAndLimit,
];

export const option = {
	name: 'Get Delivery Logs',
	description:
		'List the delivery attempts of a webhook subscription, with status codes and responses',
	action: 'Get webhook delivery logs',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Lists the delivery attempts of one webhook subscription (by its numeric Webhook ID), newest first: event_type, success, tries, status_code, response, created_at. At most Limit entries.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	const limit = readLimit.call(this, itemIndex);
	return await listAll.call(this, `/${webhookId}/logs`, {
		limit,
		itemIndex,
		...webhookNotFound(webhookId),
	});
}
