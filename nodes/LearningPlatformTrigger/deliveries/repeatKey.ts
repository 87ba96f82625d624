// The repeat key: what makes two deliveries one event occurrence at one destination, so that the
// delivery ledger (ledger.ts) runs it once. A retry re-sends the same bytes, but a redispatch is
// "queued for dispatch unless the original payload model no longer exists" (spec, operation 14): a
// platform may render it again from its current records. The learner's new email or the course's
// new summary would then make a completion that already ran look new, and it would run twice.
// docs/design.md, "Exactly once".
import { createHash } from 'node:crypto';

import { KEY_CHARACTERS } from './ledgerText';

/**
 * Where a delivery arrived: one trigger node of one workflow, in one mode (the production and the
 * test URL are two destinations), for one subscription.
 */
export interface Destination {
	workflowId: string;
	nodeId: string;
	mode: string;
	subscriptionId: number | undefined;
}

const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';

/** The fields of a completion that are the record's own facts (spec, delivery rule 8). */
const COMPLETION_FACTS = [
	'id',
	'user_id',
	'content_id',
	'time_enrolled',
	'time_started',
	'time_completed',
] as const;

/**
 * The part of a delivery's payload that identifies its occurrence. A created completion is its
 * record and the record's own times: the learner, the course and the certificate link are views
 * of other records that may change before a redispatch. Another event, or a payload without the
 * shape the spec gives, is identified by the whole payload.
 */
export function occurrenceOf(event: string, payload: unknown): unknown {
	if (event !== COMPLETION_CREATED || !isObject(payload) || !isObject(payload.completion))
		return payload;
	const completion = payload.completion;
	if (typeof completion.id !== 'number') return payload;
	const facts: Record<string, unknown> = {};
	for (const field of COMPLETION_FACTS) facts[field] = completion[field] ?? null;
	return { completion: facts };
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted: the same payload gives the same text, however it was built. */
function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
	if (value && typeof value === 'object') {
		const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
			a < b ? -1 : 1,
		);
		return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

/**
 * One event occurrence at one destination: its event and payload, not its send time or delivery
 * id, so a platform retry (same bytes) and a redispatch (new `now` and `delivery_id`) of it are
 * recognised alike. The production and the test URL are two destinations. 48 bits of the hash
 * (8 characters, as the workflow's static data keeps up to 5,000 of them and n8n saves it whole
 * with every delivery): with the 10,000 occurrences a process remembers at most, a new one is
 * taken for a repeat once in about 2.8 x 10^10 deliveries, once in 7,000 years at 10,000 a day.
 */
export function occurrenceKey(destination: string[], event: string, payload: unknown): string {
	const hash = createHash('sha256');
	for (const part of destination) hash.update(part).update('\0');
	return hash
		.update(event)
		.update('\0')
		.update(canonical(payload))
		.digest('base64url')
		.slice(0, KEY_CHARACTERS);
}

/**
 * The key of a delivery of `event` at `destination`: its occurrence (`occurrenceOf` its payload),
 * or, for a body without a payload, the bytes as received.
 */
export function repeatKey(
	destination: Destination,
	event: string,
	payload: unknown,
	rawBody: Buffer,
): string {
	const { workflowId, nodeId, mode, subscriptionId } = destination;
	return occurrenceKey(
		[workflowId, nodeId, mode, String(subscriptionId ?? '')],
		event,
		payload === undefined || payload === null
			? rawBody.toString('base64')
			: occurrenceOf(event, payload),
	);
}
