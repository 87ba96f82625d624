import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { describeEvent } from '../../../shared/helpers';
import { apiRequest } from '../../../shared/transport';

export const description: INodeProperties[] = [];

export const option = {
	name: 'Get Events',
	description: 'List the event names and wildcards a subscription can use',
	action: 'Get webhook events',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Lists the event names (and wildcards) a webhook subscription of the learning platform can use.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const response = (await apiRequest.call(this, 'GET', 'webhook', '/events', { itemIndex })) as {
		events?: unknown;
	};
	const names = Array.isArray(response?.events) ? (response.events as string[]) : [];
	return names.map((name) => {
		const event = describeEvent(name);
		return { event: event.name, displayName: event.displayName, wildcard: event.isWildcard };
	});
}
