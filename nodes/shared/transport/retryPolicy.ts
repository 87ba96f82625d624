// What to do after a failed request, decided from the facts alone (no I/O, no clock) so every
// branch is tested without a server. The rules: docs/design.md, "What is repeated".
import type { IHttpRequestMethods } from 'n8n-workflow';

import type { FailedRequest } from './failureFacts';

/** Retries of network errors and 5xx (GET only). */
export const MAX_TRANSIENT_RETRIES = 4;
/** 429 answers waited out before giving up. */
export const MAX_RATE_LIMIT_RETRIES = 20;
/** Failed (unavailable) exchanges retried before giving up. */
export const MAX_EXCHANGE_RETRIES = 5;
/**
 * Times the stored credential may move on and still hand us a dead token within one call (each
 * move is a rotation by someone else, so this only stops an endless chase).
 */
export const MAX_CREDENTIAL_MOVES = 20;

/** Network failures after which the request may have reached the server. */
const TRANSIENT_NETWORK_CODES = new Set([
	'ECONNRESET',
	'ETIMEDOUT',
	'ECONNABORTED',
	'EPIPE',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'ENETDOWN',
	'EAI_AGAIN',
	'UND_ERR_SOCKET',
	'UND_ERR_CONNECT_TIMEOUT',
	'UND_ERR_HEADERS_TIMEOUT',
	'UND_ERR_BODY_TIMEOUT',
	'ERR_BAD_RESPONSE',
]);
/**
 * Network failures that some clients report only in the message, without a code: a dropped
 * socket, and the HTTP client's own time-out ("timeout of 120000ms exceeded"). Not any message
 * with "timeout" in it: n8n's database pool says "timeout exceeded when trying to connect" when
 * it is exhausted, and repeating the request then only adds to the queue.
 */
export const TRANSIENT_NETWORK_MESSAGE = /socket hang up|terminated|^timeout of \d+ ?ms exceeded/i;

/** How many times each kind of repeat has been used in this call. */
export interface Attempts {
	transient: number;
	rateLimit: number;
	exchange: number;
	credentialMoves: number;
}

export type NextAction =
	| { kind: 'fail' }
	/** repeat after a jittered exponential pause; `counter` is the attempt kind to count */
	| { kind: 'retry'; counter: 'transient' | 'exchange'; pauseMs: number; reason: string }
	/** repeat at once: the rate limiter holds the request until the window allows it */
	| { kind: 'retryAfterRateLimit' }
	/** read the stored credential until it moves on (repeat) or settles on the dead token (fail) */
	| { kind: 'awaitCredential' };

export function isIdempotent(method: IHttpRequestMethods): boolean {
	return method === 'GET' || method === 'HEAD';
}

/** Whether a request that got no answer may be sent again without doing its work twice. */
export function isRepeatable(method: IHttpRequestMethods, code: string | undefined): boolean {
	return isIdempotent(method) || code === 'ECONNREFUSED';
}

/** Half to one and a half times `base` × 2^(attempt-1), capped. */
export function backoff(
	attempt: number,
	baseMs: number,
	capMs: number,
	random: () => number = Math.random,
): number {
	const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
	return Math.floor(exp / 2 + random() * exp);
}

export function nextAction(
	facts: FailedRequest,
	method: IHttpRequestMethods,
	attempts: Attempts,
	random: () => number = Math.random,
): NextAction {
	if (facts.cancelled) return { kind: 'fail' };

	if (facts.authFailure) {
		const { kind, dead } = facts.authFailure;
		if (kind === 'unavailable' && attempts.exchange < MAX_EXCHANGE_RETRIES) {
			return {
				kind: 'retry',
				counter: 'exchange',
				pauseMs: backoff(attempts.exchange + 1, 1_000, 8_000, random),
				reason: 'credential exchange unavailable',
			};
		}
		if (
			(kind === 'stale' || kind === 'refused') &&
			dead &&
			attempts.credentialMoves < MAX_CREDENTIAL_MOVES
		) {
			return { kind: 'awaitCredential' };
		}
		return { kind: 'fail' };
	}

	if (facts.status !== undefined) {
		if (facts.status === 429 && attempts.rateLimit < MAX_RATE_LIMIT_RETRIES) {
			return { kind: 'retryAfterRateLimit' };
		}
		if (facts.status >= 500 && isIdempotent(method) && attempts.transient < MAX_TRANSIENT_RETRIES) {
			return {
				kind: 'retry',
				counter: 'transient',
				pauseMs: backoff(attempts.transient + 1, 500, 8_000, random),
				reason: `HTTP ${facts.status}`,
			};
		}
		return { kind: 'fail' };
	}

	const transient =
		facts.code === 'ECONNREFUSED' ||
		(facts.code !== undefined && TRANSIENT_NETWORK_CODES.has(facts.code)) ||
		TRANSIENT_NETWORK_MESSAGE.test(facts.message);
	if (transient && isRepeatable(method, facts.code) && attempts.transient < MAX_TRANSIENT_RETRIES) {
		return {
			kind: 'retry',
			counter: 'transient',
			pauseMs: backoff(attempts.transient + 1, 500, 8_000, random),
			reason: `network error ${facts.code ?? facts.message}`,
		};
	}
	return { kind: 'fail' };
}
