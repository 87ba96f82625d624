/**
 * Authentication (spec §Authentication, operation 1).
 *
 * - The operator issues a refresh token for an API username out of band (control API).
 * - `GET {report_root}/apikeys?username=` with `Authorization: Bearer <refresh_token>` exchanges it:
 *   the token is looked up together with its username; success rotates BOTH values and the
 *   previous pair stops working at once (single use); failure is 401 text/plain and invalidates
 *   nothing.
 * - Every other operation takes `Authorization: Bearer <api_key>`, valid 24 hours. An unknown,
 *   superseded or expired key gets 401 JSON `{message: "Unauthenticated.", error: <reason>}`.
 */
import type { Ctx, Reply } from './http';
import { bearer, json, text } from './http';
import { peek } from './rateLimit';
import type { Store } from './store';
import type { ApiUser, RequestLogEntry } from './types';
import { randomToken } from './util';

export const API_KEY_LIFETIME_S = 86_400;

function newPair(store: Store, user: ApiUser) {
	user.refreshToken = randomToken('rt_', 32);
	user.apiKey = randomToken('ak_', 32);
	user.apiKeyExpiresAt = store.now() + API_KEY_LIFETIME_S * 1000;
	store.tokenOwners.set(user.refreshToken, user.username);
	store.tokenOwners.set(user.apiKey, user.username);
}

/**
 * Operator (re-)issue of a refresh token: creates the API user when new; otherwise the previous
 * refresh token and API key die. The user has no live API key until its first exchange.
 */
export function issueRefreshToken(store: Store, username: string): ApiUser {
	let user = store.apiUsers.get(username);
	if (!user) {
		user = {
			username,
			refreshToken: '',
			apiKey: '',
			apiKeyExpiresAt: 0,
			exchanges: 0,
			failedExchanges: 0,
			createdAt: store.now(),
		};
		store.apiUsers.set(username, user);
	}
	user.refreshToken = randomToken('rt_', 32);
	user.apiKey = '';
	user.apiKeyExpiresAt = 0;
	store.tokenOwners.set(user.refreshToken, username);
	store.dirty();
	return user;
}

const unauthorizedText = () => text(401, 'Unauthorized');

/** Operation 1: refresh. */
export function refresh(ctx: Ctx, tenancyOk: boolean): Reply {
	const { store } = ctx.sb;
	const token = bearer(ctx.headers);
	const username = ctx.query.get('username');
	const owner = token ? store.tokenOwners.get(token) : undefined;
	const user = username ? store.apiUsers.get(username) : undefined;
	const ok = tenancyOk && !!token && !!user && user.refreshToken === token;
	if (!ok) {
		// attribute the failure to whoever the token (or else the username) belongs to
		const blamed = (owner && store.apiUsers.get(owner)) || user;
		if (blamed) blamed.failedExchanges++;
		store.dirty();
		return unauthorizedText();
	}
	newPair(store, user);
	user.exchanges++;
	store.dirty();
	return json(
		200,
		{
			success: true,
			api_key: user.apiKey,
			expires_in: API_KEY_LIFETIME_S,
			refresh_token: user.refreshToken,
		},
		peek(store, user.username),
	);
}

/** Authenticates an API key for every operation except the refresh. */
export function authenticate(ctx: Ctx): { user: ApiUser } | { reject: Reply } {
	const { store } = ctx.sb;
	const token = bearer(ctx.headers);
	const fail = (error: string) =>
		({
			reject: json(401, { message: 'Unauthenticated.', error }, { 'WWW-Authenticate': 'Bearer' }),
		}) as const;
	if (!token) return fail('missing_api_key');
	const owner = store.tokenOwners.get(token);
	const user = owner ? store.apiUsers.get(owner) : undefined;
	if (!user || user.apiKey !== token) return fail('invalid_api_key');
	if (store.now() >= user.apiKeyExpiresAt) return fail('expired_api_key');
	return { user };
}

/** For the request log: what kind of credential was presented (never the value itself). */
export function classify(
	store: Store,
	authorization: string | undefined,
): Pick<RequestLogEntry, 'authorization_kind' | 'username'> {
	if (!authorization) return { authorization_kind: 'none', username: null };
	const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
	const token = m?.[1].trim();
	const owner = token ? (store.tokenOwners.get(token) ?? null) : null;
	const user = owner ? store.apiUsers.get(owner) : undefined;
	if (user && token === user.refreshToken)
		return { authorization_kind: 'refresh', username: owner };
	if (user && token === user.apiKey && store.now() < user.apiKeyExpiresAt)
		return { authorization_kind: 'api_key', username: owner };
	return { authorization_kind: 'invalid', username: owner };
}
