import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredId } from '../../helpers/parameters';
import { logIdLocator, logNotFound, webhookIdLocator } from '../../helpers/webhooks';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription the failed delivery belongs to'),
	logIdLocator('The delivery log entry to send again (usually a failed one)'),
];

const displayOptions = { show: { resource: ['webhook'], operation: ['redispatch'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
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
	});
}
