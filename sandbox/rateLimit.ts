/**
 * Limits (spec §Limits): N requests per minute per API key (default 60), sliding 60 s window on
 * the sandbox clock. Headers `X-Ratelimit-Limit` and `X-RateLimit-Remaining` on every
 * authenticated response; past the limit 429 with `Retry-After` (seconds until a slot frees).
 *
 * The bucket belongs to the API user (the integration credential), not to the rotating key
 * string, so refreshing the key does not reset it. Requests answered 429 do not count.
 */
import type { Reply } from './http';
import { json } from './http';
import type { Store } from './store';

const WINDOW_MS = 60_000;

function windowOf(store: Store, username: string): number[] {
	const now = store.now();
	let w = store.rateWindows.get(username);
	if (!w) store.rateWindows.set(username, (w = []));
	while (w.length && w[0] <= now - WINDOW_MS) w.shift();
	// a clock moved backwards (or reset) must not leave stamps in the future
	if (w.length && w[w.length - 1] > now) w.length = 0;
	return w;
}

export function rateHeaders(limit: number, remaining: number): Record<string, string> {
	return {
		'X-Ratelimit-Limit': String(limit),
		'X-RateLimit-Remaining': String(Math.max(0, remaining)),
	};
}

/** Headers describing the bucket without consuming from it (used on the refresh response). */
export function peek(store: Store, username: string): Record<string, string> {
	const limit = store.config.rateLimitPerMinute;
	return rateHeaders(limit, limit - windowOf(store, username).length);
}

/** Consumes one request; returns the headers to add, or a 429 reply. */
export function consume(
	store: Store,
	username: string,
): { headers: Record<string, string>; reject?: Reply } {
	const limit = store.config.rateLimitPerMinute;
	const w = windowOf(store, username);
	const now = store.now();
	if (w.length >= limit) {
		store.stats.rate_limited++;
		const retryAfter = Math.max(1, Math.ceil((w[w.length - limit] + WINDOW_MS - now) / 1000));
		const headers = { ...rateHeaders(limit, 0), 'Retry-After': String(retryAfter) };
		return { headers, reject: json(429, { message: 'Too Many Attempts.' }, headers) };
	}
	w.push(now);
	return { headers: rateHeaders(limit, limit - w.length) };
}
