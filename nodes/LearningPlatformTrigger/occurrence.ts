// What makes two deliveries one event occurrence, for the repeat key (deliveryLedger.ts). A retry
// re-sends the same bytes, but a redispatch is "queued for dispatch unless the original payload
// model no longer exists" (spec, operation 14): a platform may render it again from its current
// records. The learner's new email or the course's new summary would then make a completion that
// already ran look new, and it would run twice. docs/design.md, "Exactly once".

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
