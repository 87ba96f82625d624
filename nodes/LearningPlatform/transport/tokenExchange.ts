/**
 * The refresh-token exchange (spec operation 1) as run from the credential's `preAuthentication`.
 *
 * The refresh token is single-use: every successful exchange rotates the API key AND the refresh
 * token, and the previous pair dies at once. n8n has no lock on this path (not in a process, not
 * across processes), reloads the credential from the database on every
 * `httpRequestWithAuthentication` call, and persists whatever `preAuthentication` returns. So:
 *
 * 1. Single flight. Callers in this process presenting the same refresh token while its exchange
 *    is in flight share that one exchange and all return its pair (each caller's n8n then stores
 *    the same values).
 * 2. Never hand out a remembered pair. Once an exchange has finished, its token is "spent" here:
 *    it is never sent again, and a late caller presenting it is NOT answered with the pair it
 *    produced, because by now another process may have rotated that pair too, and n8n would store
 *    the older pair over the newer one (killing the credential). The late caller gets a `stale`
 *    failure instead (n8n stores nothing), and the transport retries after a short wait with the
 *    reloaded credential, which by then holds the new pair.
 * 3. A 401 from the exchange invalidates nothing on the server, and it is final for that token
 *    (with that username and tenancy): the token was superseded, revoked, or does not match. So a
 *    refused token is not sent again for a minute. Both a spent and a refused token are reported
 *    with the token's fingerprint and since when it is known dead; whether the failure is final
 *    is decided by the transport from the STORED credential (./refusal.ts): a refusal right after
 *    another process rotated is normal until that process has stored its new pair. Nothing is
 *    persisted either way.
 *
 * Tokens are only ever held as SHA-256 hashes in the maps below, never logged or put in errors.
 */
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
import {
	AUTH_FAILURE,
	authFailure,
	DEAD_SINCE,
	DEAD_TOKEN,
	headerValue,
	inspectFailure,
	type AuthFailureError,
} from './errors';
import { withUserAgent } from './userAgent';

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

export function rejectedMessage(settings: ConnectionSettings): string {
	return (
		`The refresh token for ${apiUserLabel(settings)} was rejected by the learning platform (401). ` +
		'Paste a new refresh token in the credential.'
	);
}

export const REJECTED_DESCRIPTION =
	'The refresh token is single-use: each exchange replaces it. It is refused when it was already ' +
	'used (for example by another n8n instance or another tool sharing this API user), revoked, or ' +
	'issued for a different API username or tenancy. Nothing stored in the credential was changed. ' +
	'Ask the platform operator for a new refresh token if you no longer have a valid one, and give ' +
	'each integration its own API user.';

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
	if (missing.length) {
		throw authFailure(
			'invalid',
			`The Learning Platform credential is incomplete: ${missing.join(', ')} missing`,
		);
	}

	const hash = tokenHash(settings, refreshToken);
	const pending = inFlight.get(hash);
	if (pending) return await shared(pending);

	const refusedAt = refused.get(hash);
	if (refusedAt !== undefined) {
		if (clock().now() - refusedAt < REFUSAL_MEMORY_MS) throw refusal(settings, hash, refusedAt);
		refused.delete(hash);
	}

	const spentAt = spent.get(hash);
	if (spentAt !== undefined) {
		throw authFailure(
			'stale',
			`The credential for ${apiUserLabel(settings)} was loaded before its refresh token was rotated (stale credential)`,
			'This n8n process already exchanged this refresh token; the request is retried with the credential as stored now.',
			{ token: hash, since: spentAt },
		);
	}

	const exchange = runExchange(helpers, settings, refreshToken, hash).finally(() =>
		inFlight.delete(hash),
	);
	inFlight.set(hash, exchange);
	return await shared(exchange);
}

/** Each caller gets its own copy of the pair, or its own copy of the error. */
async function shared(exchange: Promise<RotatedPair>): Promise<RotatedPair> {
	try {
		return { ...(await exchange) };
	} catch (error) {
		const e = error as AuthFailureError;
		const token = e[DEAD_TOKEN];
		const since = e[DEAD_SINCE];
		const dead = token !== undefined && since !== undefined ? { token, since } : undefined;
		throw authFailure(e[AUTH_FAILURE] ?? 'unavailable', e.message, e.description, dead);
	}
}

function refusal(settings: ConnectionSettings, hash: string, refusedAt: number) {
	return authFailure('refused', rejectedMessage(settings), REJECTED_DESCRIPTION, {
		token: hash,
		since: refusedAt,
	});
}

async function runExchange(
	helpers: IHttpRequestHelper['helpers'],
	settings: ConnectionSettings,
	refreshToken: string,
	hash: string,
): Promise<RotatedPair> {
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

	// A 2xx answer means the server may have rotated the pair: this token is spent from now on,
	// whatever the body says.
	markSpent(hash);
	refused.delete(hash);

	let body = response.body as IDataObject | string | undefined;
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
		throw authFailure(
			'invalid',
			`The learning platform answered the API-key refresh for ${apiUserLabel(settings)} without a new API key and refresh token`,
			'The previous refresh token may no longer be valid. If requests keep failing, paste a new refresh token in the credential.',
		);
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
	if (facts.status === 403 || facts.status === 404 || facts.status === 400) {
		return authFailure(
			'invalid',
			`The API-key refresh for ${apiUserLabel(settings)} was answered ${facts.status}`,
			facts.status === 404
				? "Check the credential's Base URL and Tenancy ID."
				: "Check the credential's Base URL, Tenancy ID and API Username.",
		);
	}
	if (facts.status !== undefined) {
		const retryAfter = headerValue(facts.headers, 'retry-after');
		return authFailure(
			'unavailable',
			`The learning platform could not refresh the API key for ${apiUserLabel(settings)} (HTTP ${facts.status})`,
			retryAfter ? `The server asked to retry after ${retryAfter} s.` : 'Try again later.',
		);
	}
	return authFailure(
		'unavailable',
		`Could not reach the learning platform at ${settings.baseUrl} to refresh the API key${facts.code ? ` (${facts.code})` : ''}`,
		"Check the credential's Base URL and that the server is reachable from n8n.",
	);
}

/** For tests: forget all in-process exchange state. */
export function resetTokenExchangeState() {
	inFlight.clear();
	spent.clear();
	refused.clear();
}
