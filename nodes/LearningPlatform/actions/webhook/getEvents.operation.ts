import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { describeEvent } from '../../helpers/events';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [];

const displayOptions = { show: { resource: ['webhook'], operation: ['getEvents'] } };

export const description = updateDisplayOptions(displayOptions, properties);

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
