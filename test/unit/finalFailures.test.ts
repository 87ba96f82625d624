/**
 * The final failures of a delivery log (`finalFailures`): the failed entries that stand for a
 * delivery the platform could not make, under both readings of "every attempt is recorded": one
 * entry per delivery (`tries` counts its attempts) and one entry per attempt (`tries` is the
 * attempt's number). Each missed delivery is named once; a delivery that went through on a later
 * attempt, and a redispatch that went on as entries of its own, are not.
 */
import type { DeliveryLogEntry } from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';
import { finalFailures } from '../../nodes/LearningPlatformTrigger/recovery/finalFailures';

const EVENT = 'Events\\Courses\\Completion_created';
const base = Date.parse('2026-11-25T12:00:00Z');
const at = (seconds: number) =>
	new Date(base + seconds * 1000).toISOString().replace('Z', '+00:00');
let nextId = 1;

/** One logged attempt `tries` of a delivery, sent at `sent` s and answered 1 s later. */
function attempt(
	tries: number,
	sent: number,
	success: boolean,
	fields: Partial<DeliveryLogEntry> = {},
): DeliveryLogEntry {
	return {
		id: nextId++,
		event_type: EVENT,
		delivery_id: '',
		success,
		tries,
		status_code: success ? 200 : 502,
		redispatched: false,
		created_at: at(sent),
		updated_at: at(sent + 1),
		...fields,
	};
}

const ids = (entries: DeliveryLogEntry[]) => entries.map((e) => e.id).sort((a, b) => a - b);

/** `count` deliveries `spacing` s apart from `start`, each failing once (`status`), through 5 s on. */
function retriedBurst(
	start: number,
	count: number,
	spacing: number,
	status: (index: number) => number | null,
): DeliveryLogEntry[] {
	const entries: DeliveryLogEntry[] = [];
	for (let i = 0; i < count; i++)
		entries.push(
			attempt(1, start + i * spacing, false, { status_code: status(i) }),
			attempt(2, start + i * spacing + 5, true),
		);
	return entries;
}

describe('one entry per attempt', () => {
	test('a delivery that failed every attempt is named once, by its last attempt', () => {
		const chain = [attempt(1, 0, false), attempt(2, 5, false), attempt(3, 15, false)];
		expect(ids(finalFailures(chain))).toEqual([chain[2].id]);
	});

	test('a delivery that went through on a later attempt is not named', () => {
		expect(finalFailures([attempt(1, 0, false), attempt(2, 5, true)])).toEqual([]);
		expect(
			finalFailures([attempt(1, 0, false), attempt(2, 5, false), attempt(3, 15, true)]),
		).toEqual([]);
	});

	test('a burst of interleaved deliveries: each that failed throughout once, none that went through', () => {
		const entries: DeliveryLogEntry[] = [];
		const failedLast: number[] = [];
		for (let i = 0; i < 20; i++) {
			const first = attempt(1, i * 0.2, false);
			const second = attempt(2, i * 0.2 + 5, i % 2 === 0);
			entries.push(first, second);
			if (i % 2 === 1) {
				const third = attempt(3, i * 0.2 + 15, false);
				entries.push(third);
				failedLast.push(third.id);
			}
		}
		// the log as the API lists it: newest first
		expect(ids(finalFailures(entries.reverse()))).toEqual(failedLast.sort((a, b) => a - b));
	});

	test('a redispatch goes on as entries of its own: the entry asked for, and the redispatch once it went through, are not named again', () => {
		const last = attempt(2, 5, false, {
			redispatched: true,
			delivery_id: 'r-1',
			updated_at: at(100),
		});
		const chain = [attempt(1, 0, false), last];
		const redispatch = [
			attempt(1, 100, false, { redispatched: true, delivery_id: 'r-1' }),
			attempt(2, 105, true, { redispatched: true, delivery_id: 'r-1' }),
		];
		expect(finalFailures([...chain, ...redispatch])).toEqual([]);
	});

	test('a redispatch that failed throughout is named by its own last attempt', () => {
		const last = attempt(2, 5, false, {
			redispatched: true,
			delivery_id: 'r-1',
			updated_at: at(100),
		});
		const failedAgain = attempt(2, 105, false, { redispatched: true, delivery_id: 'r-1' });
		const entries = [
			attempt(1, 0, false),
			last,
			attempt(1, 100, false, { redispatched: true, delivery_id: 'r-1' }),
			failedAgain,
		];
		expect(ids(finalFailures(entries))).toEqual([failedAgain.id]);
	});

	test('an entry read twice (the list shifted while it was paged) is named once', () => {
		const last = attempt(2, 5, false);
		const entries = [attempt(1, 0, false), last];
		expect(finalFailures([...entries, last, { ...last }])).toEqual([last]);
	});

	test('attempts answered alike pair as before: a delivery answered 404 three times is named once', () => {
		const chain = [
			attempt(1, 0, false, { status_code: 404 }),
			attempt(2, 5, false, { status_code: 404 }),
			attempt(3, 15, false, { status_code: 404 }),
		];
		expect(ids(finalFailures(chain))).toEqual([chain[2].id]);
	});

	test('a delivery answered 404, then 200 by its retry (a platform that retries a 404): its 404 is named too, one redispatch the ledger runs once', () => {
		const chain = [attempt(1, 0, false, { status_code: 404 }), attempt(2, 5, true)];
		expect(ids(finalFailures(chain))).toEqual([chain[0].id]);
		// answered 502, then 200: a platform retries a 502
		const transient = [attempt(1, 10, false), attempt(2, 15, true)];
		expect(finalFailures(transient)).toEqual([]);
	});

	test('a burst of failures answered alike (no answer) pairs each retry', () => {
		expect(finalFailures(retriedBurst(0, 10, 0.1, () => null))).toEqual([]);
	});

	test('a 404 logged between the 502 of another delivery and its retry: both are named, either could be the one the platform did not retry', () => {
		const first = attempt(1, 0, false, { status_code: 502 });
		const notRetried = attempt(1, 2, false, { status_code: 404 });
		const retry = attempt(2, 5, true);
		expect(ids(finalFailures([first, notRetried, retry]))).toEqual([first.id, notRetried.id]);
		// once either was redispatched, the retry continues the nearest again: nothing is hidden
		const asked = (id: number) => id === notRetried.id;
		expect(ids(finalFailures([first, notRetried, retry], asked))).toEqual([first.id]);
		const flagged = { ...notRetried, redispatched: true };
		expect(ids(finalFailures([first, flagged, retry]))).toEqual([first.id]);
	});

	test('a 404, then another delivery answered 502 and then 404: the first 404 is named beside the other delivery', () => {
		const notRetried = attempt(1, 0, false, { status_code: 404 });
		const other = [
			attempt(1, 1, false, { status_code: 502 }),
			attempt(2, 2, false, { status_code: 404 }),
		];
		expect(ids(finalFailures([notRetried, ...other]))).toContain(notRetried.id);
		expect(ids(finalFailures([notRetried, ...other]))).toContain(other[1].id);
	});

	test('an old failure the platform did not retry leaves the retries of later deliveries answered otherwise unpaired only until it is redispatched', () => {
		const notRetried = attempt(1, 0, false, { status_code: 404 });
		const later = retriedBurst(60, 5, 0.2, () => 502);
		const firstAttempts = later.filter((entry) => entry.tries === 1).map((entry) => entry.id);
		expect(ids(finalFailures([notRetried, ...later]))).toEqual([notRetried.id, ...firstAttempts]);
		const asked = (id: number) => id === notRetried.id;
		expect(ids(finalFailures([notRetried, ...later], asked))).toEqual([notRetried.id]);
	});

	test('a delivery the platform stopped retrying (the subscription was disabled) is named beside a later burst', () => {
		const stopped = attempt(1, 0, false, { status_code: 502 });
		const burst = retriedBurst(600, 5, 0.2, () => 502);
		expect(ids(finalFailures([stopped, ...burst]))).toEqual([stopped.id]);
	});

	test('failures answered differently and all retried pair each retry', () => {
		const entries = retriedBurst(0, 10, 0.2, (i) => (i % 2 ? 502 : null));
		expect(finalFailures(entries)).toEqual([]);
	});

	test("a redispatch's attempts and a delivery's attempts do not continue each other", () => {
		// a redispatch's first attempt fails, a 404 the platform leaves, between a delivery's
		// first attempt and its retry; the redispatch's retry comes after a 404 of the delivery's
		const redispatched = { redispatched: true, delivery_id: 'r-1' };
		const delivered = attempt(1, 0, false);
		const redispatchNotRetried = attempt(1, 2, false, { ...redispatched, status_code: 404 });
		const deliveredRetry = attempt(2, 5, true);
		expect(ids(finalFailures([delivered, redispatchNotRetried, deliveredRetry]))).toEqual([
			redispatchNotRetried.id,
		]);
		const redispatchFirst = attempt(1, 10, false, redispatched);
		const notRetried = attempt(1, 12, false, { status_code: 404 });
		const redispatchRetry = attempt(2, 15, true, redispatched);
		expect(ids(finalFailures([redispatchFirst, notRetried, redispatchRetry]))).toEqual([
			notRetried.id,
		]);
	});

	test("an attempt's entry written seconds after its answer, or after a time-out, still continues and is continued", () => {
		const late = { created_at: at(0), updated_at: at(3), response_time_ms: 900 };
		const timedOut = { created_at: at(10), updated_at: at(40), response_time_ms: 30_000 };
		const chain = [
			attempt(1, 0, false, late),
			attempt(2, 10, false, timedOut),
			attempt(3, 50, true, { response_time_ms: 200 }),
		];
		expect(finalFailures(chain)).toEqual([]);
	});

	test('events of another type do not continue each other', () => {
		const created = attempt(1, 0, false);
		const updated = attempt(2, 5, true, { event_type: 'Events\\Courses\\Completion_updated' });
		expect(ids(finalFailures([created, updated]))).toEqual([created.id]);
	});
});

describe('one entry per delivery', () => {
	test('each failed delivery is named, whatever its tries; those that went through are not', () => {
		const failed = [
			attempt(3, 0, false, { updated_at: at(20) }),
			attempt(3, 2, false, { updated_at: at(22) }),
		];
		const through = [attempt(1, 1, true), attempt(2, 3, true, { updated_at: at(9) })];
		expect(ids(finalFailures([...failed, ...through]))).toEqual(ids(failed));
	});

	test("a delivery that went through on its second try, seconds after another's 404 the platform did not retry, leaves that 404 named", () => {
		const notRetried = attempt(1, 0, false, { status_code: 404, response_time_ms: 200 });
		// dispatched at 2 s, its first attempt answered 502, its retry 10 s later answered 200
		const second = attempt(2, 2, true, { updated_at: at(13), response_time_ms: 150 });
		expect(ids(finalFailures([notRetried, second]))).toEqual([notRetried.id]);
		const failedTwice = attempt(2, 2, false, { updated_at: at(13), response_time_ms: 150 });
		expect(ids(finalFailures([notRetried, failedTwice]))).toEqual(ids([notRetried, failedTwice]));
	});

	test("a delivery that went through on its second try a moment after another's 404 the platform did not retry (attempts under 3 s apart) leaves that 404 named", () => {
		const notRetried = attempt(1, 0, false, { status_code: 404, response_time_ms: 200 });
		// dispatched at 2 s, its first attempt answered 502, its retry 200 ms later answered 200
		const second = attempt(2, 2, true, { updated_at: at(3), response_time_ms: 150 });
		expect(ids(finalFailures([notRetried, second]))).toEqual([notRetried.id]);
	});

	test('an entry that went through on its redispatch leaves an older 404 the platform did not retry named', () => {
		const notRetried = attempt(1, 0, false, { status_code: 404 });
		// answered 404 at 2 s, then redispatched (by a person, say): it records the redispatch
		const redispatched = attempt(2, 2, true, {
			redispatched: true,
			delivery_id: 'r-4',
			updated_at: at(900),
		});
		expect(ids(finalFailures([notRetried, redispatched]))).toEqual([notRetried.id]);
	});

	test('a redispatched entry is its redispatch: named while it failed again, not once it went through', () => {
		const again = attempt(4, 0, false, {
			redispatched: true,
			delivery_id: 'r-2',
			updated_at: at(900),
		});
		const through = attempt(4, 2, true, {
			redispatched: true,
			delivery_id: 'r-3',
			updated_at: at(900),
		});
		expect(ids(finalFailures([again, through]))).toEqual([again.id]);
	});
});
