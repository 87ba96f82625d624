/**
 * Error plumbing shared by the transport and the credential's token exchange:
 * - the marker that the exchange puts on its errors so the transport can tell "retry with the
 *   reloaded credential" from "give up";
 * - reading status, headers, body and network code out of whatever n8n's HTTP helpers threw;
 * - scrubbing secrets out of any text that may end up in an error, a log line or an output.
 */
import type { IDataObject } from 'n8n-workflow';

/** Property carrying the kind of a credential-exchange failure (a plain string: survives wrapping). */
export const AUTH_FAILURE = 'learningPlatformAuthFailure';

/**
 * - `stale`: the refresh token presented was already spent by this process; nothing was sent.
 * - `refused`: the exchange of this token was answered 401 (now, or within the last minute, in
 *   which case it is not sent again): superseded by a rotation elsewhere, revoked, or issued for
 *   another username or tenancy.
 *   For both, the transport reads the stored credential until it moves on or has held the dead
 *   token long enough to call it final (./refusal.ts).
 * - `unavailable`: the exchange failed for a transient reason (network, 5xx, 429). Retry.
 * - `invalid`: the credential is incomplete or the server's answer made no sense. Final.
 */
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

/**
 * Builds the error thrown from `preAuthentication`. It deliberately carries no `response`,
 * `status`, `statusCode`, `code` or `httpCode`: n8n's `httpRequestWithAuthentication` calls
 * `preAuthentication` a second time when the error looks like an HTTP 401
 * (`error.response.status === 401`), and `NodeApiError` would replace our message with its generic
 * one for any status it finds. It also never wraps the underlying HTTP error, whose request
 * config holds the refresh token in its Authorization header.
 */
/**
 * The exchange's failures of the last minutes, by message. n8n 1.x wraps the error thrown from
 * `preAuthentication` in a NodeApiError that keeps only its message and description (no `cause`,
 * no own properties), so the marker is lost on the way to the transport. The exchange runs in the
 * transport's process, so the message alone finds the facts again.
 */
const recentAuthFailures = new Map<
	string,
	NonNullable<FailureFacts['authFailure']> & { at: number }
>();
const RECENT_AUTH_FAILURE_MS = 5 * 60_000;
const MAX_RECENT_AUTH_FAILURES = 1_000;

function rememberAuthFailure(facts: NonNullable<FailureFacts['authFailure']>): void {
	recentAuthFailures.delete(facts.message);
	recentAuthFailures.set(facts.message, { ...facts, at: Date.now() });
	if (recentAuthFailures.size > MAX_RECENT_AUTH_FAILURES) {
		const oldest = recentAuthFailures.keys().next().value;
		if (oldest !== undefined) recentAuthFailures.delete(oldest);
	}
}

function recentAuthFailure(message: string): FailureFacts['authFailure'] {
	const found = recentAuthFailures.get(message);
	if (!found || Date.now() - found.at > RECENT_AUTH_FAILURE_MS) return undefined;
	return {
		kind: found.kind,
		message: found.message,
		description: found.description,
		dead: found.dead,
	};
}

export function authFailure(
	kind: AuthFailureKind,
	message: string,
	description?: string,
	dead?: { token: string; since: number },
): AuthFailureError {
	rememberAuthFailure({ kind, message, description, dead });
	const error = new Error(message) as AuthFailureError;
	error.name = 'LearningPlatformCredentialError';
	error[AUTH_FAILURE] = kind;
	if (description) error.description = description;
	if (dead) {
		error[DEAD_TOKEN] = dead.token;
		error[DEAD_SINCE] = dead.since;
	}
	return error;
}

/** What the transport needs to know about a failed request. */
export interface FailureFacts {
	authFailure?: {
		kind: AuthFailureKind;
		message: string;
		description?: string;
		/** for `stale` and `refused`: the dead token's fingerprint and since when it is known dead */
		dead?: { token: string; since: number };
	};
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
export function inspectFailure(error: unknown): FailureFacts {
	const facts: FailureFacts = { message: '', cancelled: false };
	let current: unknown = error;
	for (let depth = 0; depth < MAX_DEPTH && current && typeof current === 'object'; depth++) {
		const e = current as IDataObject & {
			response?: IDataObject;
			cause?: unknown;
			message?: string;
		};
		if (!facts.authFailure && typeof e[AUTH_FAILURE] === 'string') {
			facts.authFailure = {
				kind: e[AUTH_FAILURE] as AuthFailureKind,
				message: String(e.message ?? ''),
				description: typeof e.description === 'string' ? e.description : undefined,
				dead:
					typeof e[DEAD_TOKEN] === 'string' && typeof e[DEAD_SINCE] === 'number'
						? { token: e[DEAD_TOKEN] as string, since: e[DEAD_SINCE] as number }
						: undefined,
			};
		}
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
		if (!facts.code && typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code)) facts.code = e.code;
		if (e.name === 'CanceledError' || e.code === 'ERR_CANCELED' || e.name === 'AbortError')
			facts.cancelled = true;
		if (typeof e.message === 'string' && e.message) facts.message = e.message;
		current = e.cause;
	}
	if (!facts.authFailure && facts.status === undefined && facts.message) {
		facts.authFailure = recentAuthFailure(facts.message);
	}
	if (facts.status === undefined && error && typeof error === 'object') {
		const httpCode = Number((error as IDataObject).httpCode);
		if (Number.isInteger(httpCode) && httpCode >= 100) facts.status = httpCode;
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

// ---------------------------------------------------------------------------------------------
// Secrets

const SECRET_KEYS = [
	'signing_key',
	'signingKey',
	'auth_token',
	'authToken',
	'api_key',
	'apiKey',
	'refresh_token',
	'refreshToken',
	'access_token',
	'password',
	'secret',
];
const REDACTED = '[redacted]';
const keyPattern = SECRET_KEYS.join('|');
/** "key": "value" / key=value / key: value */
const KEY_VALUE = new RegExp(
	`((?:"|')?(?:${keyPattern})(?:"|')?\\s*[:=]\\s*)("[^"]*"|'[^']*'|[^\\s,&;}\\]]+)`,
	'gi',
);
const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;

/**
 * Removes every known secret value, bearer credential and `key: value` pair whose key names a
 * secret. `secrets` are exact values to remove wherever they occur (short values are ignored so a
 * one-character field cannot blank out a message).
 */
export function scrubSecrets(text: string, secrets: Array<string | undefined | null> = []): string {
	let out = String(text);
	const values = secrets
		.filter((s): s is string => typeof s === 'string' && s.length >= 6)
		.sort((a, b) => b.length - a.length);
	for (const value of values) out = out.split(value).join(REDACTED);
	out = out.replace(BEARER, `$1 ${REDACTED}`);
	out = out.replace(KEY_VALUE, (_m, prefix: string, value: string) => {
		if (value === 'null' || value === '""' || value === "''") return `${prefix}${value}`;
		const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
		return `${prefix}${quote}${REDACTED}${quote}`;
	});
	return out;
}

/** Deep copy of a JSON value with secret-named keys and known secret values removed. */
export function scrubObject<T>(value: T, secrets: Array<string | undefined | null> = []): T {
	const keySet = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));
	const walk = (v: unknown, depth: number): unknown => {
		if (depth > 20) return undefined;
		if (typeof v === 'string') return scrubSecrets(v, secrets);
		if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
		if (v && typeof v === 'object') {
			const out: IDataObject = {};
			for (const [k, x] of Object.entries(v)) {
				out[k] =
					keySet.has(k.toLowerCase()) && x !== null && x !== ''
						? REDACTED
						: (walk(x, depth + 1) as IDataObject);
			}
			return out;
		}
		return v;
	};
	return walk(value, 0) as T;
}

// ---------------------------------------------------------------------------------------------
// API answers

/**
 * Message for an HTTP-200 `status: "Failed"` body: each field and its messages, e.g.
 * `updatedSince: The updated since must be in the format Y-m-d\TH:i:s\Z.; limit: ...`.
 * The reports' generic `exception` key is shown as the bare message.
 */
export function failedStatusMessage(errors: IDataObject): string {
	if (!errors || typeof errors !== 'object') return 'The API reported a failure without details';
	const parts: string[] = [];
	for (const [field, value] of Object.entries(errors)) {
		let messages: string[];
		if (Array.isArray(value))
			messages = value.map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
		else if (value && typeof value === 'object') messages = [JSON.stringify(value)];
		else messages = [String(value)];
		const text = messages.join(' ').trim();
		parts.push(field === 'exception' ? text : `${field}: ${text}`);
	}
	return parts.length ? parts.join('; ') : 'The API reported a failure without details';
}

/** The server's own message from an error body (JSON `message`/`error`, or a short text body). */
export function serverMessage(body: unknown): string | undefined {
	if (typeof body === 'string') {
		const text = body.trim();
		if (!text) return undefined;
		try {
			return serverMessage(JSON.parse(text));
		} catch {
			return text.length > 300 ? `${text.slice(0, 300)}…` : text;
		}
	}
	if (body && typeof body === 'object') {
		const b = body as IDataObject;
		if (typeof b.message === 'string' && b.message) return b.message;
		if (typeof b.error === 'string' && b.error) return b.error;
		if (
			b.error &&
			typeof b.error === 'object' &&
			typeof (b.error as IDataObject).message === 'string'
		) {
			return (b.error as IDataObject).message as string;
		}
	}
	return undefined;
}

/** Validation details of a Laravel-style 422 body (`errors: {field: [messages]}`), if any. */
export function validationDetails(body: unknown): string | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const errors = (body as IDataObject).errors;
	if (!errors || typeof errors !== 'object' || Array.isArray(errors)) return undefined;
	return failedStatusMessage(errors as IDataObject);
}

/**
 * The webhook API's 422s that need their own advice. The spec leaves their body shape open, so
 * they are told apart by the server's words; the trigger checks the list before trusting them.
 */
export type Rejection = 'capReached' | 'duplicate' | 'wildcard';

export function classifyRejection(text: string): Rejection | undefined {
	const lower = text.toLowerCase();
	if (/maximum|limit|\b100\b/.test(lower)) return 'capReached';
	if (lower.includes('already exists')) return 'duplicate';
	if (lower.includes('wildcard')) return 'wildcard';
	return undefined;
}

export const REJECTION_ADVICE: Record<Rejection, string> = {
	capReached:
		'This API user already has 100 webhook subscriptions, the most allowed. Delete unused ones (Operation "Delete") and try again.',
	duplicate:
		'A subscription for this event and URL already exists. Update that one instead (Operation "Update"), or use another URL.',
	wildcard: 'Pick a single event, not a wildcard.',
};
