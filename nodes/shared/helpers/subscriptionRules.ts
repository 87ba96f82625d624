// The platform's rules for webhook subscriptions (spec: Webhooks, Limits), in one place for both
// nodes: the cap per API key, https destinations only, and the 422s that need their own advice.
// Each node words its own refusals; a call that writes a subscription hands the transport
// `readSubscriptionRejection` (option `readRejection`) and reads the outcome with
// `subscriptionRejectionOf`, never from the text.
import { rejectionOf, type RejectionReading } from '../transport';

/** The API's cap on live subscriptions, per API key (spec: Limits). */
export const SUBSCRIPTION_CAP = 100;

/** Whether the platform delivers to `url`: only an absolute https:// URL with a host. */
export function isHttpsUrl(url: string): boolean {
	try {
		const parsed = new URL(url);
		return parsed.protocol === 'https:' && parsed.hostname !== '';
	} catch {
		return false;
	}
}

/** The webhook API's 422s that need their own advice, told apart by the server's words. */
export type SubscriptionRejection = 'capReached' | 'duplicate' | 'wildcard';

const REJECTION_ADVICE: Record<SubscriptionRejection, string> = {
	capReached: `This API user already has ${SUBSCRIPTION_CAP} webhook subscriptions, the most allowed. Delete unused ones (Operation "Delete") and try again.`,
	duplicate:
		'A subscription for this event and URL already exists. Update that one instead (Operation "Update"), or use another URL.',
	wildcard: 'Pick a single event, not a wildcard.',
};

const CAP_WORDS = new RegExp(`maximum|limit|\\b${SUBSCRIPTION_CAP}\\b`);

function classifyRejection(text: string): SubscriptionRejection | undefined {
	const lower = text.toLowerCase();
	if (CAP_WORDS.test(lower)) return 'capReached';
	if (lower.includes('already exists')) return 'duplicate';
	if (lower.includes('wildcard')) return 'wildcard';
	return undefined;
}

/**
 * What a 422 to a call that writes a subscription (or relays a sample) means, from the server's
 * reason: the transport's option `readRejection`. Undefined leaves the transport's own wording.
 */
export function readSubscriptionRejection(reason: string): RejectionReading | undefined {
	const kind = classifyRejection(reason);
	return kind === undefined ? undefined : { kind, advice: REJECTION_ADVICE[kind] };
}

/** Which subscription rejection a failed request was (undefined for any other error). */
export function subscriptionRejectionOf(error: unknown): SubscriptionRejection | undefined {
	const kind = rejectionOf(error);
	return kind !== undefined && Object.prototype.hasOwnProperty.call(REJECTION_ADVICE, kind)
		? (kind as SubscriptionRejection)
		: undefined;
}
