import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { readLimit, requiredId } from '../../helpers/parameters';
import { webhookNotFound } from '../../helpers/webhooks';
import { apiRequestAllPages } from '../../transport';
import { returnAllAndLimit, webhookIdLocator } from '../common.descriptions';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription whose delivery log to read'),
	...returnAllAndLimit,
];

const displayOptions = { show: { resource: ['webhook'], operation: ['getLogs'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	const limit = readLimit.call(this, itemIndex);
	return await apiRequestAllPages.call(this, `/${webhookId}/logs`, {
		limit,
		itemIndex,
		...webhookNotFound(webhookId),
	});
}
