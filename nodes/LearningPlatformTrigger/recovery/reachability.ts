// Whether the platform can reach the trigger's webhook now, asked of the platform itself: it sends
// a sample event to the URL (spec operation 15, relay) and says what the URL answered. While it
// cannot (an expired certificate, a firewall rule, n8n's front down), every redispatch fails
// again and adds an entry to the log, for days; so recovery asks this before it redispatches
// again, and waits, one request per check, until the answer changes or a delivery arrives.
// docs/design.md, "Missed deliveries", "Unreachable for days".
import type { IDataObject } from 'n8n-workflow';

/** A concrete event (relay refuses wildcards); the sample is unsigned, so the trigger refuses it. */
export const PROBE_EVENT = 'Events\\Courses\\Completion_created';

/**
 * What the relay's answer says: true when the webhook answered as the trigger or n8n's webhook
 * server does (any status but the ones of a front or a server that is down, busy or lacks the
 * webhook), false when it did not, undefined when the answer does not tell.
 */
export function reachedBy(answer: { data?: IDataObject } | undefined): boolean | undefined {
	const status = answer?.data?.status_code;
	if (typeof status !== 'number') return undefined;
	if (status <= 0 || status >= 500) return false;
	// 404: n8n without the workflow's webhook; 408, 425, 429: a front that did not pass it on
	return ![404, 408, 425, 429].includes(status);
}
