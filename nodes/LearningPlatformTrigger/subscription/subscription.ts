import { createHmac, randomBytes } from 'node:crypto';
import type { IDataObject, IHookFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { MASK_VISIBLE_CHARACTERS } from '../../shared/helpers';
import {
	apiRequest,
	operationFailure,
	readList,
	rejectionOf,
	statusOf,
	type FailureNotice,
} from '../../shared/transport';
import { clearField, readField, writeField, type StaticDataField } from '../staticData';

// The webhook trigger's subscription lifecycle against `{webhook_root}` (spec operations 8 to 12):
// what is kept in the node's static data, and the create / checkExists / delete steps n8n calls
// on activation and deactivation.

/** What the trigger keeps in `getWorkflowStaticData('node')` while a subscription is registered. */
export interface StoredSubscription {
	subscriptionId: number;
	signingKey: string;
	authToken: string;
	event: string;
	url: string;
	/** registered for "Listen for test event": always deleted, never kept */
	test?: boolean;
}

interface WebhookSubscription {
	id: number;
	event: string;
	url: string;
	is_enabled: boolean;
	signing_key: string | null;
	auth_token: string | null;
}

/** The API's cap, per API key (spec: Limits). */
export const SUBSCRIPTION_CAP = 100;
const SECRET_BYTES = 32;

const STORED_KEYS: Array<keyof StoredSubscription> = [
	'subscriptionId',
	'signingKey',
	'authToken',
	'event',
	'url',
	'test',
];

export function readStoredSubscription(staticData: IDataObject): Partial<StoredSubscription> {
	const text = (field: StaticDataField) => {
		const value = readField(staticData, field);
		return typeof value === 'string' ? value : undefined;
	};
	const id = readField(staticData, 'subscriptionId');
	return {
		subscriptionId: typeof id === 'number' ? id : undefined,
		signingKey: text('signingKey'),
		authToken: text('authToken'),
		event: text('event'),
		url: text('url'),
		test: readField(staticData, 'test') === true ? true : undefined,
	};
}

export function clearStoredSubscription(staticData: IDataObject): void {
	for (const key of STORED_KEYS) clearField(staticData, key);
}

function storeSubscription(staticData: IDataObject, subscription: StoredSubscription): void {
	for (const key of STORED_KEYS) {
		const value = subscription[key];
		if (value === undefined) clearField(staticData, key);
		else writeField(staticData, key, value);
	}
}

/** The transport already throws n8n errors (secrets scrubbed): pass those on; wrap anything else. */
function asNodeError(this: IHookFunctions, error: unknown): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeApiError(this.getNode(), error as JsonObject);
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

/** The API accepts only HTTPS destinations; say why n8n's URL is not one before sending anything. */
export function assertHttpsWebhookUrl(this: IHookFunctions, webhookUrl: string): void {
	let protocol: string;
	try {
		protocol = new URL(webhookUrl).protocol;
	} catch {
		protocol = '';
	}
	if (protocol === 'https:') return;
	throw operationFailure(this.getNode(), webhookUrlNotHttps(webhookUrl));
}

/** Finds a live subscription of this API key for exactly this event and url (list, all pages). */
export async function findSubscription(
	this: IHookFunctions,
	event: string,
	url: string,
): Promise<{ match: WebhookSubscription | undefined; total: number }> {
	let total = 0;
	let match: WebhookSubscription | undefined;
	await readList.call(this, '', (page) => {
		total += page.length;
		match = (page as unknown as WebhookSubscription[]).find(
			(subscription) => subscription.event === event && subscription.url === url,
		);
		return match !== undefined;
	});
	return { match, total };
}

/**
 * The signing key and bearer token, made from a seed the node keeps for good: every subscription
 * of this node gets the same secrets, so a delivery's save of static data loaded before a
 * re-activation (n8n saves the whole field, last writer wins) cannot bring back secrets the
 * platform no longer uses. docs/design.md, "Exactly once".
 */
function subscriptionSecrets(staticData: IDataObject): { signingKey: string; authToken: string } {
	const stored = readField(staticData, 'secretSeed');
	let seed = typeof stored === 'string' ? stored : '';
	if (seed.length < 2 * SECRET_BYTES) {
		seed = randomBytes(SECRET_BYTES).toString('hex');
		writeField(staticData, 'secretSeed', seed);
	}
	const derive = (purpose: string) => createHmac('sha256', seed).update(purpose).digest('hex');
	return { signingKey: derive('signing key'), authToken: derive('auth token') };
}

/** A masked secret (`••••••••abcd`) or an unmasked one, compared with the secret we hold by its visible tail. */
function secretMatches(shown: unknown, held: string | undefined): boolean {
	if (
		typeof shown !== 'string' ||
		typeof held !== 'string' ||
		held.length < MASK_VISIBLE_CHARACTERS
	)
		return false;
	return shown.endsWith(held.slice(-MASK_VISIBLE_CHARACTERS));
}

/**
 * True only if the subscription in static data still exists, is enabled, and points at this
 * URL with this event and (as far as masking shows) our secrets. A 404 forgets it.
 */
export async function subscriptionExists(
	this: IHookFunctions,
	webhookUrl: string,
	event: string,
): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const stored = readStoredSubscription(staticData);
	if (stored.subscriptionId === undefined) return false;
	// a changed URL (WEBHOOK_URL) or event needs a new subscription; `create` removes the old one
	if (stored.url !== webhookUrl || stored.event !== event) return false;

	let subscription: WebhookSubscription | undefined;
	try {
		subscription = unwrap(
			await apiRequest.call(this, 'GET', 'webhook', `/${stored.subscriptionId}`),
		);
	} catch (error) {
		if (statusOf(error) === 404) {
			clearStoredSubscription(staticData);
			return false;
		}
		throw asNodeError.call(this, error);
	}
	if (!subscription) return false;
	return (
		subscription.is_enabled === true &&
		subscription.url === webhookUrl &&
		subscription.event === event &&
		secretMatches(subscription.signing_key, stored.signingKey) &&
		secretMatches(subscription.auth_token, stored.authToken)
	);
}

/**
 * Registers the subscription with the node's secrets. A 422 for an existing event+url pair (a
 * subscription left from an earlier activation, possibly disabled) adopts it: the node's secrets
 * and `is_enabled: true`. A 422 at the cap becomes an error naming the limit.
 */
export async function createSubscription(
	this: IHookFunctions,
	webhookUrl: string,
	event: string,
	{ test = false, freePlaces }: { test?: boolean; freePlaces?: FreePlaces } = {},
): Promise<void> {
	assertHttpsWebhookUrl.call(this, webhookUrl);
	const staticData = this.getWorkflowStaticData('node');
	const previous = readStoredSubscription(staticData);

	const { signingKey, authToken } = subscriptionSecrets(staticData);
	const secrets: IDataObject = {
		signing_key: signingKey,
		auth_token: authToken,
		// a label only; the API infers the authentication from which secrets are set
		auth_type: 'both',
		content_type_header: 'application/json',
		is_enabled: true,
	};

	const subscriptionId =
		(test ? undefined : await movedInPlace.call(this, previous, event, webhookUrl, secrets)) ??
		(await registerOrAdopt.call(this, event, webhookUrl, secrets, freePlaces));

	storeSubscription(staticData, {
		subscriptionId,
		signingKey,
		authToken,
		event,
		url: webhookUrl,
		test: test || undefined,
	});

	// A subscription kept from before (another URL or event) would go on receiving deliveries nobody checks.
	if (previous.subscriptionId !== undefined && previous.subscriptionId !== subscriptionId) {
		try {
			await apiRequest.call(this, 'DELETE', 'webhook', `/${previous.subscriptionId}`);
		} catch {
			// already gone (404) or unreachable: the new subscription works either way
		}
	}
}

/**
 * A production subscription whose event stays and whose URL changed (n8n's WEBHOOK_URL moved):
 * PATCHed to the new URL, so it keeps its id and its delivery log, and recovery still finds the
 * deliveries that failed before the move. The id, or undefined when there is none to move (none
 * stored, a test subscription, another event) or the platform refuses (gone: 404; the new pair
 * exists already: 422), and a new one is registered instead.
 */
async function movedInPlace(
	this: IHookFunctions,
	previous: Partial<StoredSubscription>,
	event: string,
	webhookUrl: string,
	secrets: IDataObject,
): Promise<number | undefined> {
	if (previous.subscriptionId === undefined || previous.test) return undefined;
	if (previous.event !== event || previous.url === webhookUrl) return undefined;
	try {
		await apiRequest.call(this, 'PATCH', 'webhook', `/${previous.subscriptionId}`, {
			body: { url: webhookUrl, ...secrets },
		});
		return previous.subscriptionId;
	} catch (error) {
		const status = statusOf(error);
		if (status === 404 || status === 422) return undefined;
		throw asNodeError.call(this, error);
	}
}

/** Frees places under the API key's cap if it can (subscriptions waiting to be deleted); true if it did. */
export type FreePlaces = () => Promise<boolean>;

/**
 * POSTs the subscription; a 422 for a pair that exists already adopts it (PATCH with `secrets`).
 * At the cap, tries once more after `freePlaces` freed some. Returns the subscription's id.
 */
async function registerOrAdopt(
	this: IHookFunctions,
	event: string,
	webhookUrl: string,
	secrets: IDataObject,
	freePlaces?: FreePlaces,
): Promise<number> {
	let subscriptionId: number | undefined;
	try {
		const created = unwrap(
			await apiRequest.call(this, 'POST', 'webhook', '', {
				body: { event, url: webhookUrl, ...secrets },
			}),
		);
		subscriptionId = created?.id;
	} catch (error) {
		if (statusOf(error) !== 422) throw asNodeError.call(this, error);
		// Which 422 it is: look for the pair rather than trusting the message wording.
		const { match, total } = await findSubscription.call(this, event, webhookUrl);
		if (match) {
			await apiRequest.call(this, 'PATCH', 'webhook', `/${match.id}`, { body: secrets });
			subscriptionId = match.id;
		} else if (total >= SUBSCRIPTION_CAP || rejectionOf(error) === 'capReached') {
			if (freePlaces !== undefined && (await freePlaces()))
				return await registerOrAdopt.call(this, event, webhookUrl, secrets);
			throw operationFailure(this.getNode(), subscriptionCapReached(SUBSCRIPTION_CAP));
		} else {
			throw asNodeError.call(this, error);
		}
	}
	if (subscriptionId === undefined) {
		throw operationFailure(this.getNode(), subscriptionWithoutId);
	}
	return subscriptionId;
}

/**
 * Deletes the stored subscription; a 404 means it is already gone. Other failures keep the data
 * for a later attempt. With `keep` (recovering missed deliveries) a production subscription stays,
 * so the platform logs what it cannot deliver while the workflow is inactive.
 */
export async function deleteSubscription(
	this: IHookFunctions,
	{ keep = false }: { keep?: boolean } = {},
): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const { subscriptionId, test } = readStoredSubscription(staticData);
	if (keep && !test && subscriptionId !== undefined) return true;
	if (subscriptionId === undefined) {
		clearStoredSubscription(staticData);
		return true;
	}
	return await deleteSubscriptionById.call(this, subscriptionId);
}

/**
 * Deletes subscription `subscriptionId` (a 404 means it is already gone) and forgets it if static
 * data still holds it; false when the platform could not be asked.
 */
export async function deleteSubscriptionById(
	this: IHookFunctions,
	subscriptionId: number,
): Promise<boolean> {
	try {
		await apiRequest.call(this, 'DELETE', 'webhook', `/${subscriptionId}`);
	} catch (error) {
		if (statusOf(error) !== 404) return false;
	}
	const staticData = this.getWorkflowStaticData('node');
	if (readStoredSubscription(staticData).subscriptionId === subscriptionId)
		clearStoredSubscription(staticData);
	return true;
}

// ---- The subscription's own failures -------------------------------------------------------------

function subscriptionCapReached(cap: number): FailureNotice {
	return {
		message: `The learning platform allows at most ${cap} webhook subscriptions per API key, and this credential's API key has reached that limit`,
		description:
			'Delete webhook subscriptions that are no longer used (Learning Platform node, Webhook resource: Get Many, then Delete), or use a credential with its own API user, then activate the workflow again.',
	};
}

function webhookUrlNotHttps(webhookUrl: string): FailureNotice {
	return {
		message: `The learning platform only delivers webhooks to https:// URLs, but this workflow's webhook URL is ${webhookUrl}`,
		description:
			'n8n builds webhook URLs from its WEBHOOK_URL environment variable. Set WEBHOOK_URL to the public https:// address that reaches this n8n instance (for example https://n8n.example.com/, with TLS handled by a reverse proxy if n8n itself listens on plain http) and restart n8n. Alternatively, use the Learning Platform Completion Trigger, which polls and needs no public URL.',
	};
}

const subscriptionWithoutId: FailureNotice = {
	message: 'The learning platform did not return the id of the new webhook subscription',
};
