/**
 * What the transport does after a failed request, decided from the facts alone: every branch of
 * the retry rules without a server or a clock.
 */
import type { FailedRequest } from '../../nodes/shared/transport/failureFacts';
import {
	MAX_CREDENTIAL_MOVES,
	MAX_EXCHANGE_RETRIES,
	MAX_RATE_LIMIT_RETRIES,
	MAX_TRANSIENT_RETRIES,
	backoff,
	nextAction,
	type Attempts,
} from '../../nodes/shared/transport/retryPolicy';

const none: Attempts = { transient: 0, rateLimit: 0, exchange: 0, credentialMoves: 0 };
const facts = (extra: Partial<FailedRequest>): FailedRequest => ({
	message: '',
	cancelled: false,
	...extra,
});
const half = () => 0.5;

describe('nextAction', () => {
	test('429: repeated for every method (the server did not process it), up to the cap', () => {
		for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
			expect(nextAction(facts({ status: 429 }), method, none)).toEqual({
				kind: 'retryAfterRateLimit',
			});
		}
		expect(
			nextAction(facts({ status: 429 }), 'GET', { ...none, rateLimit: MAX_RATE_LIMIT_RETRIES }),
		).toEqual({ kind: 'fail' });
	});

	test('5xx: a read is repeated with a growing pause; a write never (it may have been processed)', () => {
		expect(nextAction(facts({ status: 503 }), 'GET', none, half)).toEqual({
			kind: 'retry',
			counter: 'transient',
			pauseMs: 500,
			reason: 'HTTP 503',
		});
		expect(nextAction(facts({ status: 503 }), 'GET', { ...none, transient: 2 }, half)).toEqual(
			expect.objectContaining({ pauseMs: 2000 }),
		);
		expect(nextAction(facts({ status: 500 }), 'POST', none)).toEqual({ kind: 'fail' });
		expect(
			nextAction(facts({ status: 502 }), 'GET', { ...none, transient: MAX_TRANSIENT_RETRIES }),
		).toEqual({ kind: 'fail' });
	});

	test('4xx other than 429: final at once', () => {
		for (const status of [400, 401, 403, 404, 422]) {
			expect(nextAction(facts({ status }), 'GET', none)).toEqual({ kind: 'fail' });
		}
	});

	test('no answer: a read is repeated; a write only when the connection was refused', () => {
		expect(nextAction(facts({ code: 'ECONNRESET' }), 'GET', none, half)).toEqual(
			expect.objectContaining({ kind: 'retry', counter: 'transient' }),
		);
		expect(nextAction(facts({ code: 'ECONNRESET' }), 'POST', none)).toEqual({ kind: 'fail' });
		expect(nextAction(facts({ code: 'ECONNREFUSED' }), 'POST', none, half)).toEqual(
			expect.objectContaining({ kind: 'retry', counter: 'transient' }),
		);
		expect(nextAction(facts({ message: 'socket hang up' }), 'GET', none, half)).toEqual(
			expect.objectContaining({ kind: 'retry' }),
		);
		// the HTTP client's own time-out, reported without a code
		expect(
			nextAction(facts({ message: 'timeout of 120000ms exceeded' }), 'GET', none, half),
		).toEqual(expect.objectContaining({ kind: 'retry', counter: 'transient' }));
		// not a network failure n8n could have repeated (e.g. a refused request option)
		expect(nextAction(facts({ message: 'Invalid URL' }), 'GET', none)).toEqual({ kind: 'fail' });
	});

	test("n8n's database pool time-out is not a network failure: not repeated", () => {
		// pg-pool's words when n8n's connections are all taken (e.g. queued on a slow credential write)
		const poolTimeout = facts({ message: 'timeout exceeded when trying to connect' });
		expect(nextAction(poolTimeout, 'GET', none)).toEqual({ kind: 'fail' });
	});

	test('a cancelled request is never repeated', () => {
		expect(nextAction(facts({ cancelled: true, status: 429 }), 'GET', none)).toEqual({
			kind: 'fail',
		});
	});

	test('an exchange that could not run is repeated after a pause, up to the cap', () => {
		const unavailable = facts({ authFailure: { kind: 'unavailable', message: 'down' } });
		expect(nextAction(unavailable, 'POST', none, half)).toEqual({
			kind: 'retry',
			counter: 'exchange',
			pauseMs: 1000,
			reason: 'credential exchange unavailable',
		});
		expect(nextAction(unavailable, 'GET', { ...none, exchange: MAX_EXCHANGE_RETRIES })).toEqual({
			kind: 'fail',
		});
	});

	test('a dead refresh token: wait for the stored credential; an invalid credential: final', () => {
		const dead = { token: 'fp', since: 1 };
		for (const kind of ['stale', 'refused'] as const) {
			expect(nextAction(facts({ authFailure: { kind, message: '', dead } }), 'GET', none)).toEqual({
				kind: 'awaitCredential',
			});
			expect(
				nextAction(facts({ authFailure: { kind, message: '', dead } }), 'GET', {
					...none,
					credentialMoves: MAX_CREDENTIAL_MOVES,
				}),
			).toEqual({ kind: 'fail' });
		}
		expect(
			nextAction(facts({ authFailure: { kind: 'invalid', message: 'incomplete' } }), 'GET', none),
		).toEqual({ kind: 'fail' });
	});
});

describe('backoff', () => {
	test('doubles per attempt between half and one and a half times, capped', () => {
		expect([1, 2, 3, 4].map((attempt) => backoff(attempt, 500, 8_000, () => 0))).toEqual([
			250, 500, 1000, 2000,
		]);
		expect(backoff(1, 500, 8_000, () => 0.999)).toBe(749);
		expect(backoff(10, 500, 8_000, () => 0.5)).toBe(8_000);
	});
});
