import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { requiredId } from '../../helpers/parameters';
import { logNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../transport';
import { logIdLocator, webhookIdLocator } from '../common.descriptions';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription the failed delivery belongs to'),
	logIdLocator('The delivery log entry to send again (usually a failed one)'),
];

const displayOptions = { show: { resource: ['webhook'], operation: ['redispatch'] } };

export const description = updateDisplayOptions(displayOptions, properties);

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
