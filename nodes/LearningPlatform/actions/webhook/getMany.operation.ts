import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { readLimit } from '../../helpers/parameters';
import { maskSubscription } from '../../helpers/webhooks';
import { apiRequestAllPages } from '../../transport';
import { returnAllAndLimit } from '../common.descriptions';

const properties: INodeProperties[] = [...returnAllAndLimit];

const displayOptions = { show: { resource: ['webhook'], operation: ['getMany'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const limit = readLimit.call(this, itemIndex);
	const subscriptions = await apiRequestAllPages.call(this, '', { limit, itemIndex });
	return subscriptions.map(maskSubscription);
}
