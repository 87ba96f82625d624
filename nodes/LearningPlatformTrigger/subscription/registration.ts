// Registering the subscription with the node's secrets (n8n's create): moved in place when only
// the URL changed, adopted when the platform has the pair already, registered anew otherwise.
import type { IDataObject, INode } from 'n8n-workflow';

import { isHttpsUrl, SUBSCRIPTION_CAP, subscriptionRejectionOf } from '../../shared/helpers';
import { operationFailure, statusOf } from '../../shared/transport';
import { subscriptionCapReached, subscriptionWithoutId, webhookUrlNotHttps } from './failures';
import { findSubscription } from './lookup';
import { asNodeError, type SubscriptionRequests } from './requests';
import {
	readStoredSubscription,
	storeSubscription,
	subscriptionSecrets,
	type StoredSubscription,
} from './stored';

/** Frees places under the API key's cap if it can (subscriptions waiting to be deleted); true if it did. */
export type FreePlaces = () => Promise<boolean>;

/** Whether an active trigger of another n8n instance answers at `url` (the stored subscription's). */
export type ServedElsewhere = (url: string) => Promise<boolean>;

/** The API accepts only HTTPS destinations; say why n8n's URL is not one before sending anything. */
export function assertHttpsWebhookUrl(node: INode, webhookUrl: string): void {
	if (!isHttpsUrl(webhookUrl)) throw operationFailure(node, webhookUrlNotHttps(webhookUrl));
}

/**
 * Registers the subscription with the node's secrets. A 422 for an existing event+url pair (a
 * subscription left from an earlier activation, possibly disabled) adopts it: the node's secrets
 * and `is_enabled: true`. A 422 at the cap becomes an error naming the limit.
 */
export async function createSubscription(
	api: SubscriptionRequests,
	staticData: IDataObject,
	webhookUrl: string,
	event: string,
	options: { test?: boolean; freePlaces?: FreePlaces; servedElsewhere?: ServedElsewhere } = {},
): Promise<void> {
	const { test = false, freePlaces, servedElsewhere } = options;
	assertHttpsWebhookUrl(api.node, webhookUrl);
	const stored = readStoredSubscription(staticData);
	// a copy of another instance (its database, an export, a restore) holds that instance's
	// subscription: neither moved nor deleted, the copy registers its own (docs/design.md, "Edits
	// and moves")
	const copied =
		!test &&
		stored.subscriptionId !== undefined &&
		stored.url !== undefined &&
		stored.url !== webhookUrl &&
		(await servedElsewhere?.(stored.url)) === true;
	const previous = copied ? {} : stored;

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
		(test ? undefined : await movedInPlace(api, previous, event, webhookUrl, secrets)) ??
		(await registerOrAdopt(api, event, webhookUrl, secrets, freePlaces));

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
			await api.remove(previous.subscriptionId);
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
	api: SubscriptionRequests,
	previous: Partial<StoredSubscription>,
	event: string,
	webhookUrl: string,
	secrets: IDataObject,
): Promise<number | undefined> {
	if (previous.subscriptionId === undefined || previous.test) return undefined;
	if (previous.event !== event || previous.url === webhookUrl) return undefined;
	try {
		await api.change(previous.subscriptionId, { url: webhookUrl, ...secrets });
		return previous.subscriptionId;
	} catch (error) {
		const status = statusOf(error);
		if (status === 404 || status === 422) return undefined;
		throw asNodeError(api.node, error);
	}
}

/**
 * POSTs the subscription; a 422 for a pair that exists already adopts it (PATCH with `secrets`).
 * At the cap, tries once more after `freePlaces` freed some. Returns the subscription's id.
 */
async function registerOrAdopt(
	api: SubscriptionRequests,
	event: string,
	webhookUrl: string,
	secrets: IDataObject,
	freePlaces?: FreePlaces,
): Promise<number> {
	let subscriptionId: number | undefined;
	try {
		const created = await api.create({ event, url: webhookUrl, ...secrets });
		subscriptionId = created?.id;
	} catch (error) {
		if (statusOf(error) !== 422) throw asNodeError(api.node, error);
		// Which 422 it is: look for the pair rather than trusting the message wording.
		const { match, total } = await findSubscription(api, event, webhookUrl);
		if (match) {
			await api.change(match.id, secrets);
			subscriptionId = match.id;
		} else if (total >= SUBSCRIPTION_CAP || subscriptionRejectionOf(error) === 'capReached') {
			if (freePlaces !== undefined && (await freePlaces()))
				return await registerOrAdopt(api, event, webhookUrl, secrets);
			throw operationFailure(api.node, subscriptionCapReached(SUBSCRIPTION_CAP));
		} else {
			throw asNodeError(api.node, error);
		}
	}
	if (subscriptionId === undefined) {
		throw operationFailure(api.node, subscriptionWithoutId);
	}
	return subscriptionId;
}
