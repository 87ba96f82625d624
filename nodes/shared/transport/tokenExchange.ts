// The refresh-token exchange (spec operation 1), run from the credential's `preAuthentication`:
// single flight per token in this process, the pair handed to n8n by the one caller that ran the
// exchange only, a spent or refused token never sent again nor answered with a remembered pair. Why, and what n8n does around it: docs/design.md, "Rotation".
// Tokens are only held as SHA-256 hashes here, never logged or put in errors.
import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject, IDataObject, IHttpRequestHelper } from 'n8n-workflow';

import { clock } from './clock';
import {
	apiUserLabel,
	connectionSettings,
	missingCredentialFields,
	refreshTokenOf,
	rootUrl,
	type ConnectionSettings,
} from './config';
import { authFailure, authFailureOf, headerValue, inspectFailure } from './failureFacts';
import { withUserAgent } from './userAgent';
import { refreshTokenRejected, type FailureNotice } from './wording';

/** What `preAuthentication` returns; n8n writes each key over the stored credential data. */
export interface RotatedPair extends IDataObject {
	apiKey: string;
	refreshToken: string;
	/** ISO 8601; when the API key stops working (issue time + `expires_in`) */
	apiKeyExpiresAt: string;
}

const DEFAULT_LIFETIME_S = 86_400;
const EXCHANGE_TIMEOUT_MS = 60_000;
/**
 * How long a refusal (401) of a token is remembered: it is not sent again meanwhile. Longer than
 * the transport's settle time, so one refused exchange per token per minute at most.
 */
const REFUSAL_MEMORY_MS = 60_000;
const MAX_SPENT_ENTRIES = 10_000;

/** hash -> the exchange in flight for that token */
const inFlight = new Map<string, Promise<RotatedPair>>();
/** hash -> when this process spent the token (insertion order = age) */
const spent = new Map<string, number>();
/** hash -> when the exchange of that token was refused (401) */
const refused = new Map<string, number>();

function tokenHash(settings: ConnectionSettings, refreshToken: string): string {
	return createHash('sha256')
		.update(
			`${settings.baseUrl}\u0000${settings.tenancyId}\u0000${settings.username}\u0000${refreshToken}`,
		)
		.digest('hex');
}

/**
 * Fingerprint of a credential's refresh token with its base URL, tenancy and username: what a
 * refused or spent token is compared with when the stored credential is read again.
 */
export function credentialFingerprint(
	credentials: ICredentialDataDecryptedObject | IDataObject,
): string {
	return tokenHash(connectionSettings(credentials), refreshTokenOf(credentials));
}

function markSpent(hash: string) {
	spent.set(hash, clock().now());
	if (spent.size > MAX_SPENT_ENTRIES) {
		// forgetting the oldest only means a very old spent token would be sent once more and be
		// refused (a 401 invalidates nothing), never that a remembered pair is handed out
		const oldest = spent.keys().next().value;
		if (oldest !== undefined) spent.delete(oldest);
	}
}

/**
 * Exchanges the credential's refresh token for a new pair, with single flight and the
 * spent-token rule described above. `helpers` is the `this.helpers` n8n gives `preAuthentication`.
 */
export async function exchangeRefreshToken(
	helpers: IHttpRequestHelper['helpers'],
	credentials: ICredentialDataDecryptedObject,
): Promise<RotatedPair> {
	const settings = connectionSettings(credentials);
	const refreshToken = refreshTokenOf(credentials);
	const missing = missingCredentialFields(credentials);
	if (missing.length) throw authFailure({ kind: 'invalid', ...incompleteCredential(missing) });

	const hash = tokenHash(settings, refreshToken);
	const pending = inFlight.get(hash);
	if (pending) return await joined(pending, settings, hash);

	const refusedAt = refused.get(hash);
	if (refusedAt !== undefined) {
		if (clock().now() - refusedAt < REFUSAL_MEMORY_MS) throw refusal(settings, hash, refusedAt);
		refused.delete(hash);
	}

	const spentAt = spent.get(hash);
	if (spentAt !== undefined) {
		throw deadTokenFailure('stale', staleCredential(settings), hash, spentAt);
	}

	const exchange = runExchange(helpers, settings, refreshToken, hash).finally(() =>
		inFlight.delete(hash),
	);
	inFlight.set(hash, exchange);
	return await exchange;
}

/**
 * A caller that came while the exchange of its token was in flight. Only the caller that ran the
 * exchange hands n8n the pair, so n8n stores it once per rotation (each returned pair is one
 * UPDATE of the credential row, and a slow row holds n8n's database connections); this one gets
 * the spent-token failure, and the transport repeats its request once the stored credential has
 * moved on. A failed exchange fails it alike, each caller with its own copy of the error.
 */
async function joined(
	exchange: Promise<RotatedPair>,
	settings: ConnectionSettings,
	hash: string,
): Promise<never> {
	try {
		await exchange;
	} catch (error) {
		throw authFailure(
			authFailureOf(error) ?? { kind: 'unavailable', message: (error as Error).message },
		);
	}
	throw deadTokenFailure(
		'stale',
		staleCredential(settings),
		hash,
		spent.get(hash) ?? clock().now(),
	);
}

function refusal(settings: ConnectionSettings, hash: string, refusedAt: number) {
	return deadTokenFailure('refused', refreshTokenRejected(settings), hash, refusedAt);
}

function deadTokenFailure(
	kind: 'stale' | 'refused',
	notice: FailureNotice,
	token: string,
	since: number,
) {
	const { message, description } = notice;
	return authFailure({ kind, message, description, dead: { token, since } });
}

async function runExchange(
	helpers: IHttpRequestHelper['helpers'],
	settings: ConnectionSettings,
	refreshToken: string,
	hash: string,
): Promise<RotatedPair> {
	const body = await requestGrant(helpers, settings, refreshToken, hash);
	// A 2xx answer means the server may have rotated the pair: this token is spent from now on,
	// whatever the body says.
	markSpent(hash);
	refused.delete(hash);
	return pairOf(body, settings);
}

/** `GET {report_root}/apikeys` with the refresh token; the body of a 2xx answer, else the failure. */
async function requestGrant(
	helpers: IHttpRequestHelper['helpers'],
	settings: ConnectionSettings,
	refreshToken: string,
	hash: string,
): Promise<unknown> {
	let response: { statusCode?: number; body?: unknown; headers?: unknown };
	try {
		response = (await helpers.httpRequest({
			method: 'GET',
			url: `${rootUrl(settings, 'report')}/apikeys`,
			qs: { username: settings.username },
			headers: withUserAgent({
				Authorization: `Bearer ${refreshToken}`,
				Accept: 'application/json',
			}),
			json: true,
			returnFullResponse: true,
			timeout: EXCHANGE_TIMEOUT_MS,
		})) as typeof response;
	} catch (error) {
		// The token stays unspent: after a 401 nothing was invalidated, and after a network error
		// or a 5xx sending it again is harmless (if it was spent after all, it is simply refused).
		throw exchangeFailure(error, settings, hash);
	}

	if (
		response.statusCode !== undefined &&
		(response.statusCode < 200 || response.statusCode >= 300)
	) {
		throw exchangeFailure(
			{ response: { status: response.statusCode, headers: response.headers } },
			settings,
			hash,
		);
	}
	return response.body;
}

/** The new pair in a grant's body (JSON, or text holding JSON), with the API key's expiry. */
function pairOf(responseBody: unknown, settings: ConnectionSettings): RotatedPair {
	let body = responseBody as IDataObject | string | undefined;
	if (typeof body === 'string') {
		try {
			body = JSON.parse(body) as IDataObject;
		} catch {
			body = undefined;
		}
	}
	const grant = (body ?? {}) as IDataObject;
	const apiKey = typeof grant.api_key === 'string' ? grant.api_key : '';
	const newRefreshToken = typeof grant.refresh_token === 'string' ? grant.refresh_token : '';
	if (!apiKey || !newRefreshToken) {
		throw authFailure({ kind: 'invalid', ...exchangeWithoutPair(settings) });
	}
	const lifetime = Number(grant.expires_in);
	const seconds = Number.isFinite(lifetime) && lifetime > 0 ? lifetime : DEFAULT_LIFETIME_S;
	return {
		apiKey,
		refreshToken: newRefreshToken,
		apiKeyExpiresAt: new Date(Date.now() + seconds * 1000).toISOString(),
	};
}

function exchangeFailure(error: unknown, settings: ConnectionSettings, hash: string) {
	const facts = inspectFailure(error);
	if (facts.status === 401) {
		const refusedAt = clock().now();
		refused.set(hash, refusedAt);
		return refusal(settings, hash, refusedAt);
	}
	if (facts.status !== undefined) {
		const retryAfter = headerValue(facts.headers, 'retry-after');
		const { message, description } = exchangeAnswered(settings, facts.status, retryAfter);
		const final = facts.status === 400 || facts.status === 403 || facts.status === 404;
		return authFailure({ kind: final ? 'invalid' : 'unavailable', message, description });
	}
	return authFailure({ kind: 'unavailable', ...exchangeUnreachable(settings, facts.code) });
}

// ---- The exchange's own failures ----------------------------------------------------------------

function staleCredential(settings: ConnectionSettings): FailureNotice {
	return {
		message: `The credential for ${apiUserLabel(settings)} was loaded before its refresh token was rotated (stale credential)`,
		description:
			'This n8n process already exchanged this refresh token; the request is retried with the credential as stored now.',
	};
}

function incompleteCredential(missing: string[]): FailureNotice {
	return {
		message: `The Learning Platform credential is incomplete: ${missing.join(', ')} missing`,
	};
}

function exchangeWithoutPair(settings: ConnectionSettings): FailureNotice {
	return {
		message: `The learning platform answered the API-key refresh for ${apiUserLabel(settings)} without a new API key and refresh token`,
		description:
			'The previous refresh token may no longer be valid. If requests keep failing, paste a new refresh token in the credential.',
	};
}

/** An exchange answered with a status other than 2xx or 401. */
function exchangeAnswered(
	settings: ConnectionSettings,
	status: number,
	retryAfter: string | undefined,
): FailureNotice {
	if (status === 400 || status === 403 || status === 404) {
		return {
			message: `The API-key refresh for ${apiUserLabel(settings)} was answered ${status}`,
			description:
				status === 404
					? "Check the credential's Base URL and Tenancy ID."
					: "Check the credential's Base URL, Tenancy ID and API Username.",
		};
	}
	return {
		message: `The learning platform could not refresh the API key for ${apiUserLabel(settings)} (HTTP ${status})`,
		description: retryAfter
			? `The server asked to retry after ${retryAfter} s.`
			: 'Try again later.',
	};
}

function exchangeUnreachable(
	settings: ConnectionSettings,
	code: string | undefined,
): FailureNotice {
	return {
		message: `Could not reach the learning platform at ${settings.baseUrl} to refresh the API key${code ? ` (${code})` : ''}`,
		description: "Check the credential's Base URL and that the server is reachable from n8n.",
	};
}

/** For tests: forget all in-process exchange state. */
export function resetTokenExchangeState() {
	inFlight.clear();
	spent.clear();
	refused.clear();
}
