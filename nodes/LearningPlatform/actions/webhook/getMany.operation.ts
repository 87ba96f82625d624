import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { readLimit, maskSubscription } from '../../../shared/helpers';
import { listAll } from '../../../shared/transport';
import { returnAllAndLimit } from '../common.descriptions';

export const description: INodeProperties[] = [...returnAllAndLimit];

export const option = {
	name: 'Get Many',
	description: 'List the webhook subscriptions of this API user (secrets masked)',
	action: 'Get many webhook subscriptions',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	"Lists the learning platform's webhook subscriptions of this API user (id, event, url, is_enabled; secrets masked). At most Limit subscriptions.";

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const limit = readLimit.call(this, itemIndex);
	const subscriptions = await listAll.call(this, '', { limit, itemIndex });
	return subscriptions.map(maskSubscription);
}
