import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { readLimit, returnAllAndLimit } from '../../helpers/fields';
import { maskSubscription } from '../../helpers/webhooks';
import { apiRequestAllPages } from '../../transport';

const properties: INodeProperties[] = [...returnAllAndLimit];

const displayOptions = { show: { resource: ['webhook'], operation: ['getMany'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const limit = readLimit.call(this, itemIndex);
		const subscriptions = await apiRequestAllPages.call(this, '', { limit, itemIndex });
		return subscriptions.map(maskSubscription);
	});
}
