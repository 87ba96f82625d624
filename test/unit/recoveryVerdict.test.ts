/** Which delivery-log entries a recovery run redispatches, decided from the entry alone. */
import { LEDGER_WINDOW_MS } from '../../nodes/LearningPlatformTrigger/deliveries/ledger';
import {
	RECOVERY_HORIZON_MS,
	REDISPATCH_AGAIN_AFTER_MS,
	SETTLE_MS,
	verdictOf,
	type DeliveryLogEntry,
} from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';

const now = Date.parse('2026-11-25T12:00:00Z');
const ago = (ms: number) => new Date(now - ms).toISOString().replace('Z', '+00:00');
const entry = (fields: Partial<DeliveryLogEntry>): DeliveryLogEntry => ({
	id: 1,
	success: false,
	status_code: 404,
	redispatched: false,
	created_at: ago(5 * 60_000),
	updated_at: ago(4 * 60_000),
	...fields,
});

test('a failed delivery n8n answered (404 while inactive) is redispatched up to three days back', () => {
	expect(verdictOf(entry({}), now)).toBe('redispatch');
	expect(
		verdictOf(entry({ status_code: 502, created_at: ago(RECOVERY_HORIZON_MS - 60_000) }), now),
	).toBe('redispatch');
	expect(verdictOf(entry({ created_at: ago(RECOVERY_HORIZON_MS + 60_000) }), now)).toBe('skip');
});

test('one without an answer (refused, time-out) too, up to three days back: the ledger remembers longer', () => {
	const nightBefore = ago(10 * 60 * 60_000);
	expect(verdictOf(entry({ status_code: null, created_at: nightBefore }), now)).toBe('redispatch');
	expect(LEDGER_WINDOW_MS).toBeGreaterThan(RECOVERY_HORIZON_MS);
});

test('successful deliveries are left alone', () => {
	expect(verdictOf(entry({ success: true, status_code: 200 }), now)).toBe('skip');
});

test('an entry changed in the last 30 s may still be retried by the platform: it waits', () => {
	expect(verdictOf(entry({ updated_at: ago(SETTLE_MS - 1_000) }), now)).toBe('unsettled');
	expect(verdictOf(entry({ updated_at: ago(SETTLE_MS + 1_000) }), now)).toBe('redispatch');
});

test('an entry that records its redispatch (its delivery_id) and is still failed is redispatched again, ten minutes on', () => {
	const recorded = { redispatched: true, delivery_id: '5f0c3a52-redispatch', tries: 6 };
	expect(verdictOf(entry({ ...recorded, updated_at: ago(60_000) }), now)).toBe('skip');
	expect(
		verdictOf(entry({ ...recorded, updated_at: ago(REDISPATCH_AGAIN_AFTER_MS + 1_000) }), now),
	).toBe('redispatch');
});

test('an entry only flagged redispatched (no delivery_id) is never redispatched again: its redispatch was logged apart', () => {
	const flagged = { redispatched: true, delivery_id: '', tries: 3 };
	expect(verdictOf(entry({ ...flagged, updated_at: ago(9 * 60 * 60_000) }), now)).toBe('skip');
});

test('an entry this trigger asked for: again only when it shows more attempts than then, ten minutes on', () => {
	const asked = { tries: 3 };
	// untouched (the redispatch logged apart) or declined: never again, whatever its age or flag
	expect(verdictOf(entry({ tries: 3, updated_at: ago(9 * 60 * 60_000) }), now, asked)).toBe('skip');
	expect(
		verdictOf(
			entry({ tries: 3, redispatched: true, delivery_id: 'x', updated_at: ago(9 * 60 * 60_000) }),
			now,
			asked,
		),
	).toBe('skip');
	// it recorded the redispatch's attempts, and they failed
	expect(verdictOf(entry({ tries: 6, updated_at: ago(60_000) }), now, asked)).toBe('skip');
	expect(
		verdictOf(entry({ tries: 6, updated_at: ago(REDISPATCH_AGAIN_AFTER_MS + 1_000) }), now, asked),
	).toBe('redispatch');
	// it recorded them and they went through
	expect(verdictOf(entry({ tries: 4, success: true }), now, asked)).toBe('skip');
});

test('an entry without readable times is left alone', () => {
	expect(verdictOf(entry({ created_at: 'yesterday' }), now)).toBe('skip');
});
