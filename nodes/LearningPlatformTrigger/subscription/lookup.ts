// Looking at the platform: whether the subscription static data holds is still in place (n8n's
// checkExists), and which of the API key's subscriptions has a given event and URL.
import type { IDataObject } from 'n8n-workflow';

import { statusOf } from '../../shared/transport';
import { asNodeError, type SubscriptionRequests, type WebhookSubscription } from './requests';
import { clearStoredSubscription, readStoredSubscription, secretMatches } from './stored';

/** Finds a live subscription of this API key for exactly this event and url (list, all pages). */
export async function findSubscription(
	api: SubscriptionRequests,
	event: string,
	url: string,
): Promise<{ match: WebhookSubscription | undefined; total: number }> {
	let total = 0;
	let match: WebhookSubscription | undefined;
	await api.list((page) => {
		total += page.length;
		match = page.find((subscription) => subscription.event === event && subscription.url === url);
		return match !== undefined;
	});
	return { match, total };
}

/**
 * True only if the subscription in static data still exists, is enabled, and points at this
 * URL with this event and (as far as masking shows) our secrets. A 404 forgets it.
 */
export async function subscriptionExists(
	api: SubscriptionRequests,
	staticData: IDataObject,
	webhookUrl: string,
	event: string,
): Promise<boolean> {
	const stored = readStoredSubscription(staticData);
	if (stored.subscriptionId === undefined) return false;
	// a changed URL (WEBHOOK_URL) or event needs a new subscription; `create` removes the old one
	if (stored.url !== webhookUrl || stored.event !== event) return false;

	let subscription: WebhookSubscription | undefined;
	try {
		subscription = await api.get(stored.subscriptionId);
	} catch (error) {
		if (statusOf(error) === 404) {
			clearStoredSubscription(staticData);
			return false;
		}
		throw asNodeError(api.node, error);
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
