// The webhook API's subscription endpoints (spec operations 8 to 12) as this room's steps call
// them: a small interface instead of n8n's whole context, which only lifecycle.ts and
// retirement.ts hold. Writes hand the transport the subscription rules' reading of a 422.
import type { IDataObject, IHookFunctions, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { readSubscriptionRejection } from '../../shared/helpers';
import { apiRequest, readList } from '../../shared/transport';

/** A subscription as the webhook API returns it (secrets masked, except in the answer to a create). */
export interface WebhookSubscription {
	id: number;
	event: string;
	url: string;
	is_enabled: boolean;
	signing_key: string | null;
	auth_token: string | null;
}

export interface SubscriptionRequests {
	/** the trigger node, named in the errors the room throws */
	readonly node: INode;
	/** GET `/{id}`: the subscription, or undefined when the answer holds none */
	get(id: number): Promise<WebhookSubscription | undefined>;
	/** POST: the new subscription, or undefined when the answer holds none */
	create(body: IDataObject): Promise<WebhookSubscription | undefined>;
	/** PATCH `/{id}` with the fields to change */
	change(id: number, body: IDataObject): Promise<void>;
	/** DELETE `/{id}` */
	remove(id: number): Promise<void>;
	/** the API key's subscriptions, page after page, until `stop` returns true */
	list(stop: (page: WebhookSubscription[]) => boolean): Promise<void>;
}

/** The endpoints, called in n8n's hook context `context`. */
export function subscriptionRequests(context: IHookFunctions): SubscriptionRequests {
	const readRejection = readSubscriptionRejection;
	return {
		// asked of n8n only when an error names the node
		get node() {
			return context.getNode();
		},
		get: async (id) => unwrap(await apiRequest.call(context, 'GET', 'webhook', `/${id}`)),
		create: async (body) =>
			unwrap(await apiRequest.call(context, 'POST', 'webhook', '', { body, readRejection })),
		change: async (id, body) => {
			await apiRequest.call(context, 'PATCH', 'webhook', `/${id}`, { body, readRejection });
		},
		remove: async (id) => {
			await apiRequest.call(context, 'DELETE', 'webhook', `/${id}`);
		},
		list: async (stop) => {
			await readList.call(context, '', (page) => stop(page as unknown as WebhookSubscription[]));
		},
	};
}

/** Single objects may come bare (as the spec shows) or wrapped in `data`. */
function unwrap(response: unknown): WebhookSubscription | undefined {
	if (response === null || typeof response !== 'object') return undefined;
	const object = response as IDataObject;
	if (typeof object.id === 'number') return object as unknown as WebhookSubscription;
	const inner = object.data as IDataObject | undefined;
	if (inner && typeof inner === 'object' && typeof inner.id === 'number')
		return inner as unknown as WebhookSubscription;
	return undefined;
}

/** The transport already throws n8n errors (secrets scrubbed): pass those on; wrap anything else. */
export function asNodeError(node: INode, error: unknown): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeApiError(node, error as JsonObject);
}
