import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { requiredId } from '../../../shared/helpers';
import { logNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { logIdLocator, webhookIdLocator } from './webhook.descriptions';

export const description: INodeProperties[] = [
	webhookIdLocator('The webhook subscription the failed delivery belongs to'),
	logIdLocator('The delivery log entry to send again (usually a failed one)'),
];

export const option = {
	name: 'Redispatch',
	description: 'Queue a logged delivery (usually a failed one) to be sent again',
	action: 'Redispatch a webhook delivery',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Has the platform send one logged delivery (by Webhook ID and Log ID) again, usually a failed one.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	const logId = requiredId.call(this, 'logId', 'Delivery Log Entry', itemIndex, {
		extractValue: true,
	});
	const response = (await apiRequest.call(
		this,
		'POST',
		'webhook',
		`/${webhookId}/logs/${logId}/redispatch`,
		{ itemIndex, ...logNotFound(webhookId, logId) },
	)) as IDataObject;
	return (response?.data as IDataObject) ?? response;
}
