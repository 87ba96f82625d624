import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';

import { staticEventOptions, toEventOptions } from '../helpers';
import { apiRequest } from '../transport';

/**
 * Webhook events for option lists: the API's own list (`GET {webhook_root}/events`), with
 * the five wildcards first. When the list cannot be loaded (credential not set up yet,
 * API unreachable) the spec's static list is offered instead, so the field stays usable;
 * the real error surfaces on execution.
 */
export async function getEvents(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	let names: string[];
	try {
		const response = (await apiRequest.call(this, 'GET', 'webhook', '/events')) as {
			events?: unknown;
		};
		names = Array.isArray(response?.events) ? (response.events as string[]) : [];
	} catch {
		return staticEventOptions();
	}
	if (names.length === 0) return staticEventOptions();
	// The spec says the list contains the wildcards; add any it left out so they stay selectable.
	const wildcards = staticEventOptions()
		.filter((option) => String(option.value) === '*' || String(option.value).endsWith('\\*'))
		.map((option) => String(option.value));
	return toEventOptions([...wildcards, ...names]);
}
