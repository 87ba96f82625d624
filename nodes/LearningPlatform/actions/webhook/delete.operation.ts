import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredId } from '../../helpers/parameters';
import { webhookIdLocator, webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription to delete; it stops receiving deliveries at once'),
];

const displayOptions = { show: { resource: ['webhook'], operation: ['delete'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
			extractValue: true,
		});
		// 204 with an empty body: confirm with the id so the workflow can tell which one went
		await apiRequest.call(this, 'DELETE', 'webhook', `/${webhookId}`, {
			itemIndex,
			...webhookNotFound(webhookId),
		});
		return { deleted: true, id: webhookId };
	});
}
