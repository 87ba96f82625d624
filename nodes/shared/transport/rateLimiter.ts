// Client-side pacing (spec §Limits: N requests per minute per API key, 429 beyond it): one
// sliding 60-second window per API user, shared by every execution in the process, kept in line
// with the server by its answers, never by probes. docs/design.md, "Pacing".
import { clock, type Clock } from './clock';
import { headerValue } from './failureFacts';

export const WINDOW_MS = 60_000;
export const DEFAULT_LIMIT_PER_MINUTE = 60;
/** Extra wait past the window's edge (clock granularity, server processing order). */
export const EDGE_MARGIN_MS = 250;
/** Longest single sleep, so a cancelled execution or a changed bucket is noticed in time. */
const MAX_SLEEP_MS = 5_000;

interface Bucket {
	limit: number;
	/** false until an answer for this bucket was seen (a first request is in flight meanwhile) */
	limitKnown: boolean;
	/** start times of our requests still inside the window, ascending */
	stamps: number[];
	/** requests made by others, as seen in the last `X-RateLimit-Remaining` */
	external: { count: number; at: number } | null;
	/**
	 * others' requests as last seen, for `keyUse`, also after a 429 (the key full) and when
	 * `external` is dropped to let a request find out whether they left: until an answer tells,
	 * they are still there as far as this process knows
	 */
	seen: { count: number; at: number } | null;
	/** no request may start before this (set by a 429) */
	blockedUntil: number;
	/** resolves when the first request's answer has taught us the limit */
	learning: Promise<void> | null;
	finishLearning: (() => void) | null;
}

function prune(bucket: Bucket, now: number) {
	// A request leaves the window only once the margin past the window's edge has passed too:
	// waits are slept in chunks, and a stamp dropped at the bare edge would let the next
	// request go before the margin.
	while (bucket.stamps.length && bucket.stamps[0] + WINDOW_MS + EDGE_MARGIN_MS <= now)
		bucket.stamps.shift();
	if (bucket.external && now - bucket.external.at >= WINDOW_MS) bucket.external = null;
}

/** One API key's window as this process sees it (`RateLimiter.keyUse`). */
export interface KeyUse {
	/** requests a minute the key allows (`X-Ratelimit-Limit`; the default until an answer tells) */
	limit: number;
	/** this process's requests in the window, those in flight included */
	ours: number;
	/** everyone else's (other n8n processes, other tools), as the last answer showed them */
	others: number;
}

/** A slot taken for one request. */
export interface RateTicket {
	key: string;
	stamp: number;
	/** this ticket is the one teaching the bucket its limit */
	learner: boolean;
}

function jitter(ms: number) {
	return Math.floor(Math.random() * ms);
}

function finishLearning(bucket: Bucket, ticket: RateTicket) {
	if (!ticket.learner) return;
	ticket.learner = false;
	bucket.limitKnown = true;
	const resolve = bucket.finishLearning;
	bucket.learning = null;
	bucket.finishLearning = null;
	resolve?.();
}

function restamp(bucket: Bucket, ticket: RateTicket, now: number) {
	const i = bucket.stamps.indexOf(ticket.stamp);
	if (i < 0 || now <= ticket.stamp) return;
	bucket.stamps.splice(i, 1);
	let j = bucket.stamps.length;
	while (j > 0 && bucket.stamps[j - 1] > now) j--;
	bucket.stamps.splice(j, 0, now);
	ticket.stamp = now;
}

function releaseStamp(bucket: Bucket, stamp: number) {
	const i = bucket.stamps.indexOf(stamp);
	if (i >= 0) bucket.stamps.splice(i, 1);
}

function parseRetryAfter(value: string | undefined, now: number): number | undefined {
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 3600) * 1000;
	const date = Date.parse(value);
	if (Number.isFinite(date)) return Math.max(0, Math.min(date - now, 3_600_000));
	return undefined;
}

/** Pacing state: one bucket per API user. */
export class RateLimiter {
	private readonly buckets = new Map<string, Bucket>();

	constructor(private readonly time: () => Clock = clock) {}

	/**
	 * Waits until a request may start for `key` and takes the slot. `isCancelled` is checked after
	 * every sleep; when it returns true the wait ends with an error saying the execution was cancelled.
	 */
	async acquireSlot(
		key: string,
		options: { isCancelled?: () => boolean; onWait?: (ms: number, reason: string) => void } = {},
	): Promise<RateTicket> {
		for (;;) {
			const bucket = this.bucketFor(key);
			const time = this.time();
			const now = time.now();
			prune(bucket, now);

			if (!bucket.limitKnown && bucket.learning) {
				await bucket.learning;
				continue;
			}

			let wait = 0;
			let reason = '';
			if (bucket.blockedUntil > now) {
				wait = bucket.blockedUntil - now;
				reason = 'the server answered 429';
			} else {
				const external = bucket.external?.count ?? 0;
				const used = bucket.stamps.length + external;
				if (used >= bucket.limit) {
					reason = `${bucket.limit} requests per minute`;
					const mustFree = used - bucket.limit + 1;
					if (mustFree <= bucket.stamps.length) {
						// the mustFree-th oldest of our own requests has to leave the window
						wait = bucket.stamps[mustFree - 1] + WINDOW_MS + EDGE_MARGIN_MS - now;
					} else if (bucket.external && now - bucket.external.at < MAX_SLEEP_MS) {
						// blocked by others using the same API user, whose timing is unknown: hold back
						// briefly, then let a request find out (a 429 says exactly how long to wait)
						wait = bucket.external.at + MAX_SLEEP_MS - now;
					} else {
						bucket.external = null;
						continue;
					}
				}
			}

			if (wait <= 0) {
				const ticket: RateTicket = { key, stamp: now, learner: false };
				bucket.stamps.push(now);
				if (!bucket.limitKnown) {
					ticket.learner = true;
					bucket.learning = new Promise<void>((resolve) => {
						bucket.finishLearning = resolve;
					});
				}
				return ticket;
			}

			const ms = Math.min(wait + jitter(100), MAX_SLEEP_MS);
			options.onWait?.(ms, reason);
			await time.sleep(ms);
			if (options.isCancelled?.())
				throw new Error('The execution was cancelled while waiting for the rate limit');
		}
	}

	/**
	 * Records the server's answer to a request that held `ticket`: the limit and remaining headers,
	 * and for a 429 the block until `Retry-After`. Returns the wait (ms) a 429 imposes, else 0.
	 */
	recordAnswer(ticket: RateTicket, answer: { status?: number; headers?: unknown }): number {
		const bucket = this.bucketFor(ticket.key);
		const now = this.time().now();
		prune(bucket, now);

		const limit = Number(headerValue(answer.headers, 'x-ratelimit-limit'));
		if (Number.isInteger(limit) && limit > 0) bucket.limit = limit;

		// The server counted the request when it arrived, somewhere between our stamp and now: move
		// our stamp to now so our window never frees a slot before the server's does.
		if (answer.status !== 429) restamp(bucket, ticket, now);

		let blockedFor = 0;
		if (answer.status === 429) {
			// a refused request does not count on the server
			releaseStamp(bucket, ticket.stamp);
			const retryAfter = parseRetryAfter(headerValue(answer.headers, 'retry-after'), now);
			if (retryAfter !== undefined) {
				blockedFor = retryAfter + EDGE_MARGIN_MS + jitter(250);
			} else if (bucket.stamps.length) {
				blockedFor = Math.max(1_000, bucket.stamps[0] + WINDOW_MS + EDGE_MARGIN_MS - now);
			} else {
				blockedFor = 5_000 + jitter(1_000);
			}
			bucket.blockedUntil = Math.max(bucket.blockedUntil, now + blockedFor);
			// the key is full: all of it that is not ours is others'
			bucket.seen = { count: Math.max(0, bucket.limit - bucket.stamps.length), at: now };
		} else {
			const remaining = Number(headerValue(answer.headers, 'x-ratelimit-remaining'));
			if (Number.isInteger(remaining) && remaining >= 0) {
				// requests the server counted that are not ours (ours in flight are not yet counted,
				// so this never over-estimates because of ordering)
				const others = bucket.limit - remaining - bucket.stamps.length;
				bucket.external = others > 0 ? { count: others, at: now } : null;
				bucket.seen = { count: Math.max(0, others), at: now };
			}
		}
		finishLearning(bucket, ticket);
		return blockedFor;
	}

	/** Gives the slot back when the request never reached the API (e.g. a stale credential). */
	releaseSlot(ticket: RateTicket): void {
		const bucket = this.bucketFor(ticket.key);
		releaseStamp(bucket, ticket.stamp);
		finishLearning(bucket, ticket);
	}

	/** Ends the learning phase even when the request failed without an answer. */
	settleSlot(ticket: RateTicket): void {
		finishLearning(this.bucketFor(ticket.key), ticket);
	}

	/**
	 * How the key's window looks from this process now, for a caller that shares the key with
	 * others (recovery's share, LearningPlatformTrigger/recovery/pace.ts). Reads; changes nothing.
	 * Others' requests are held at their count for a whole window after the answer that showed
	 * them, as each of them may still be in the window until then; while a 429 blocks the key, all
	 * of it counts as used.
	 */
	keyUse(key: string): KeyUse {
		const bucket = this.buckets.get(key);
		if (!bucket) return { limit: DEFAULT_LIMIT_PER_MINUTE, ours: 0, others: 0 };
		const now = this.time().now();
		const ours = bucket.stamps.filter((at) => now - at < WINDOW_MS + EDGE_MARGIN_MS).length;
		if (bucket.blockedUntil > now)
			return { limit: bucket.limit, ours, others: Math.max(0, bucket.limit - ours) };
		const seen = bucket.seen && now - bucket.seen.at < WINDOW_MS ? bucket.seen.count : 0;
		return { limit: bucket.limit, ours, others: seen };
	}

	/** Forgets every bucket. */
	reset(): void {
		for (const bucket of this.buckets.values()) bucket.finishLearning?.();
		this.buckets.clear();
	}

	private bucketFor(key: string): Bucket {
		let bucket = this.buckets.get(key);
		if (!bucket) {
			bucket = {
				limit: DEFAULT_LIMIT_PER_MINUTE,
				limitKnown: false,
				stamps: [],
				external: null,
				seen: null,
				blockedUntil: 0,
				learning: null,
				finishLearning: null,
			};
			this.buckets.set(key, bucket);
		}
		return bucket;
	}
}

/** The limiter every execution in this process shares (the API counts per API user). */
const processLimiter = new RateLimiter();

export async function acquireSlot(
	key: string,
	options: { isCancelled?: () => boolean; onWait?: (ms: number, reason: string) => void } = {},
): Promise<RateTicket> {
	return await processLimiter.acquireSlot(key, options);
}

export function recordAnswer(
	ticket: RateTicket,
	answer: { status?: number; headers?: unknown },
): number {
	return processLimiter.recordAnswer(ticket, answer);
}

export function releaseSlot(ticket: RateTicket): void {
	processLimiter.releaseSlot(ticket);
}

export function settleSlot(ticket: RateTicket): void {
	processLimiter.settleSlot(ticket);
}

/** The key's window as this process sees it: `RateLimiter.keyUse`. */
export function keyUse(key: string): KeyUse {
	return processLimiter.keyUse(key);
}

/** For tests: forget every bucket. */
export function resetRateLimiter(): void {
	processLimiter.reset();
}
