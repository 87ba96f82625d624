// What the transport needs to know about a failed call, read out of whatever n8n's HTTP helpers
// threw, and the marker the token exchange puts on its failures. No wording here: ./wording.ts.
import type { IDataObject } from 'n8n-workflow';

import { clock } from './clock';

/** Property carrying the kind of a credential-exchange failure (a plain string: survives wrapping). */
export const AUTH_FAILURE = 'learningPlatformAuthFailure';

/** `stale`/`refused`: a dead refresh token; `unavailable`: transient; `invalid`: final. See docs/design.md. */
export type AuthFailureKind = 'stale' | 'refused' | 'unavailable' | 'invalid';

/** Properties naming the dead token (a SHA-256 fingerprint, never the token) and since when. */
export const DEAD_TOKEN = 'learningPlatformDeadToken';
export const DEAD_SINCE = 'learningPlatformDeadSince';

export interface AuthFailureError extends Error {
	[AUTH_FAILURE]: AuthFailureKind;
	[DEAD_TOKEN]?: string;
	[DEAD_SINCE]?: number;
	description?: string;
}

export interface AuthFailure {
	kind: AuthFailureKind;
	message: string;
	description?: string;
	/** for `stale` and `refused`: the dead token's fingerprint and since when it is known dead */
	dead?: { token: string; since: number };
}

// n8n 1.x wraps the error thrown from `preAuthentication` keeping only message and description,
// so the exchange's recent failures are also found again by their message.
const recentAuthFailures = new Map<string, AuthFailure & { at: number }>();
const RECENT_AUTH_FAILURE_MS = 5 * 60_000;
const MAX_RECENT_AUTH_FAILURES = 1_000;

function rememberAuthFailure(failure: AuthFailure): void {
	recentAuthFailures.delete(failure.message);
	recentAuthFailures.set(failure.message, { ...failure, at: clock().now() });
	if (recentAuthFailures.size > MAX_RECENT_AUTH_FAILURES) {
		const oldest = recentAuthFailures.keys().next().value;
		if (oldest !== undefined) recentAuthFailures.delete(oldest);
	}
}

function recentAuthFailure(message: string): AuthFailure | undefined {
	const found = recentAuthFailures.get(message);
	if (!found || clock().now() - found.at > RECENT_AUTH_FAILURE_MS) return undefined;
	return {
		kind: found.kind,
		message: found.message,
		description: found.description,
		dead: found.dead,
	};
}

/** For tests: forget the recent credential-exchange failures. */
export function resetFailureFacts(): void {
	recentAuthFailures.clear();
}

/**
 * The error thrown from `preAuthentication`. It carries no `response`/`status`/`httpCode`: n8n
 * would otherwise re-run `preAuthentication` on a 401 or replace the message with its own, and it
 * never wraps the HTTP error, whose request config holds the refresh token.
 */
export function authFailure(failure: AuthFailure): AuthFailureError {
	rememberAuthFailure(failure);
	const error = new Error(failure.message) as AuthFailureError;
	error.name = 'LearningPlatformCredentialError';
	error[AUTH_FAILURE] = failure.kind;
	if (failure.description) error.description = failure.description;
	if (failure.dead) {
		error[DEAD_TOKEN] = failure.dead.token;
		error[DEAD_SINCE] = failure.dead.since;
	}
	return error;
}

/** The failure an `authFailure` error carries (undefined for any other error). */
export function authFailureOf(error: unknown): AuthFailure | undefined {
	const e = error as Partial<AuthFailureError> | undefined;
	const kind = e?.[AUTH_FAILURE];
	if (!kind) return undefined;
	const token = e[DEAD_TOKEN];
	const since = e[DEAD_SINCE];
	return {
		kind,
		message: String(e.message ?? ''),
		description: typeof e.description === 'string' ? e.description : undefined,
		dead: typeof token === 'string' && typeof since === 'number' ? { token, since } : undefined,
	};
}

/** What the transport needs to know about a failed request. */
export interface FailedRequest {
	authFailure?: AuthFailure;
	status?: number;
	headers?: unknown;
	body?: unknown;
	/** Node.js / undici / axios error code, e.g. ECONNREFUSED */
	code?: string;
	/** the raw message of the innermost error (may need scrubbing) */
	message: string;
	cancelled: boolean;
}

const MAX_DEPTH = 6;

/** Walks `error` and its `cause` chain (n8n wraps HTTP errors in NodeApiError, sometimes twice). */
export function inspectFailure(error: unknown): FailedRequest {
	const facts: FailedRequest = { message: '', cancelled: false };
	const wrapped: { status?: number; body?: unknown } = {};
	let current: unknown = error;
	for (let depth = 0; depth < MAX_DEPTH && current && typeof current === 'object'; depth++) {
		const e = current as IDataObject & {
			response?: IDataObject;
			cause?: unknown;
			message?: string;
		};
		facts.authFailure ??= authFailureOf(e);
		const response = e.response;
		if (
			facts.status === undefined &&
			response &&
			typeof response === 'object' &&
			typeof response.status === 'number'
		) {
			facts.status = response.status;
			facts.headers = response.headers;
			facts.body = response.data ?? response.body;
		}
		// n8n 1.x's NodeApiError drops its `cause`; it keeps the status as `httpCode` and a JSON
		// body as `context.data` (a text body and the headers are lost there)
		const httpCode = Number(e.httpCode);
		if (wrapped.status === undefined && Number.isInteger(httpCode) && httpCode >= 100) {
			wrapped.status = httpCode;
		}
		const context = e.context as IDataObject | undefined;
		if (wrapped.body === undefined && context?.data && typeof context.data === 'object') {
			wrapped.body = context.data;
		}
		if (!facts.code && typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code)) facts.code = e.code;
		if (e.name === 'CanceledError' || e.code === 'ERR_CANCELED' || e.name === 'AbortError')
			facts.cancelled = true;
		if (typeof e.message === 'string' && e.message) facts.message = e.message;
		current = e.cause;
	}
	if (facts.status === undefined) facts.status = wrapped.status;
	if (facts.body === undefined && facts.status === wrapped.status) facts.body = wrapped.body;
	if (!facts.authFailure && facts.status === undefined && facts.message) {
		facts.authFailure = recentAuthFailure(facts.message);
	}
	return facts;
}

/** Case-insensitive header lookup on a plain object or an AxiosHeaders instance. */
export function headerValue(headers: unknown, name: string): string | undefined {
	if (!headers || typeof headers !== 'object') return undefined;
	const h = headers as Record<string, unknown> & { get?: (n: string) => unknown };
	let value: unknown;
	if (typeof h.get === 'function') {
		try {
			value = h.get(name);
		} catch {
			value = undefined;
		}
	}
	if (value === undefined || value === null) {
		const wanted = name.toLowerCase();
		for (const [key, v] of Object.entries(h)) {
			if (key.toLowerCase() === wanted) {
				value = v;
				break;
			}
		}
	}
	if (Array.isArray(value)) value = value[0];
	return value === undefined || value === null ? undefined : String(value);
}
