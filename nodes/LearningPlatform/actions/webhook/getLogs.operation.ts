import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { readLimit, returnAllAndLimit } from '../../helpers/fields';
import { requiredId } from '../../helpers/parameters';
import { webhookIdLocator, webhookNotFound } from '../../helpers/webhooks';
import { apiRequestAllPages } from '../../transport';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription whose delivery log to read'),
	...returnAllAndLimit,
];

const displayOptions = { show: { resource: ['webhook'], operation: ['getLogs'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
			extractValue: true,
		});
		const limit = readLimit.call(this, itemIndex);
		return await apiRequestAllPages.call(this, `/${webhookId}/logs`, {
			limit,
			itemIndex,
			...webhookNotFound(webhookId),
		});
	});
}
