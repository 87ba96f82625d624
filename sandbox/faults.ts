/**
 * Fault injection.
 *
 * Request faults, on spec paths (never /__sandbox): HTTP 500s, dropped connections, delays and
 * 429 bursts, each at a rate (0..1, default 1) and/or for exactly the next `count` matching
 * requests, optionally restricted by `pathPattern` (regex on the path) and `method`.
 * Rules are checked in order: delays add up, the first firing terminal fault (http500, drop,
 * http429) answers the request. Faults act before authentication and rate limiting (like a
 * gateway): a faulted request consumes nothing.
 *
 * Delivery faults, on outgoing webhook deliveries: the receiver gets the whole request and
 * answers, but the sandbox does not take the answer, so the attempt counts as failed and is
 * retried (identical bytes, after `deliveryBackoffMs`) although the receiver processed it:
 * - `dropAnswer`: the sandbox waits for the receiver's whole answer, then discards it; the attempt
 *   is recorded with `status_code: null`, `error: 'answer dropped (fault): the receiver answered N'`;
 * - `answerTimeout`: the sandbox stops waiting after `timeoutMs` (default 500) and records
 *   `status_code: null`, `error: 'timed out after N ms (fault: answer not awaited)'`; the request
 *   is not aborted, so the receiver still processes it (its late answer is discarded).
 * They fire on every `every`-th delivery (default 1: each) that reaches attempt number `attempt`
 * (default 1: the first attempt), counted per rule in the order the attempts start, optionally only
 * for delivery URLs whose path matches `pathPattern`, and for `count` deliveries at most.
 */
import type { Prng } from './util';

export type RequestFaultKind = 'http500' | 'drop' | 'delay' | 'http429';
export type DeliveryFaultKind = 'dropAnswer' | 'answerTimeout';
export type FaultKind = RequestFaultKind | DeliveryFaultKind;
export interface FaultSpec {
	kind: FaultKind;
	rate?: number;
	count?: number;
	delayMs?: number;
	pathPattern?: string;
	method?: string;
	/** delivery faults: every Nth delivery reaching `attempt` (default 1) */
	every?: number;
	/** delivery faults: the attempt number it applies to (default 1, the first) */
	attempt?: number;
	/** `answerTimeout`: how long the sandbox waits for the answer (default 500 ms) */
	timeoutMs?: number;
}
interface Rule extends FaultSpec {
	re: RegExp | null;
	remaining: number | null;
	hits: number;
	/** delivery faults: attempts seen by this rule */
	seen: number;
}

const REQUEST_KINDS: readonly string[] = ['http500', 'drop', 'delay', 'http429'];
const DELIVERY_KINDS: readonly string[] = ['dropAnswer', 'answerTimeout'];
const DEFAULT_ANSWER_TIMEOUT_MS = 500;

/** What a delivery fault does to one attempt. */
export interface DeliveryFault {
	kind: DeliveryFaultKind;
	/** `answerTimeout` only */
	timeoutMs: number;
}

const positiveInteger = (value: unknown) =>
	typeof value === 'number' && Number.isInteger(value) && value >= 1;

export class Faults {
	private rules: Rule[] = [];

	/** Replaces the active rules; throws with a message on an invalid spec. */
	set(specs: FaultSpec[]) {
		const rules = specs.map((s): Rule => {
			if (![...REQUEST_KINDS, ...DELIVERY_KINDS].includes(s.kind))
				throw new Error(`unknown fault kind: ${String(s.kind)}`);
			if (s.rate !== undefined && (typeof s.rate !== 'number' || s.rate < 0 || s.rate > 1))
				throw new Error('rate must be a number in 0..1');
			if (s.count !== undefined && (!Number.isInteger(s.count) || s.count < 0))
				throw new Error('count must be a non-negative integer');
			if (s.kind === 'delay' && (typeof s.delayMs !== 'number' || s.delayMs < 0))
				throw new Error('delay faults need delayMs >= 0');
			if (s.every !== undefined && !positiveInteger(s.every))
				throw new Error('every must be an integer >= 1');
			if (s.attempt !== undefined && !positiveInteger(s.attempt))
				throw new Error('attempt must be an integer >= 1');
			if (s.timeoutMs !== undefined && !positiveInteger(s.timeoutMs))
				throw new Error('timeoutMs must be an integer >= 1');
			const delivery = DELIVERY_KINDS.includes(s.kind);
			if (!delivery && (s.every ?? s.attempt ?? s.timeoutMs) !== undefined)
				throw new Error('every, attempt and timeoutMs apply to delivery faults only');
			if (delivery && (s.rate ?? s.method ?? s.delayMs) !== undefined)
				throw new Error('delivery faults take every, attempt, count, pathPattern and timeoutMs');
			return {
				...s,
				re: s.pathPattern ? new RegExp(s.pathPattern) : null,
				remaining: s.count ?? null,
				hits: 0,
				seen: 0,
			};
		});
		this.rules = rules;
	}

	clear() {
		this.rules = [];
	}

	list() {
		return this.rules.map(({ re: _re, seen: _seen, ...r }) => r);
	}

	/** Which request faults fire for this request: total delay and the terminal fault, if any. */
	pick(
		method: string,
		path: string,
		rng: Prng,
	): { delayMs: number; terminal: RequestFaultKind | null } {
		let delayMs = 0;
		for (const r of this.rules) {
			if (DELIVERY_KINDS.includes(r.kind)) continue;
			if (r.remaining !== null && r.remaining <= 0) continue;
			if (r.method && r.method.toUpperCase() !== method.toUpperCase()) continue;
			if (r.re && !r.re.test(path)) continue;
			if (r.rate !== undefined && rng.next() >= r.rate) continue;
			if (r.remaining !== null) r.remaining--;
			r.hits++;
			if (r.kind === 'delay') delayMs += r.delayMs ?? 0;
			else return { delayMs, terminal: r.kind as RequestFaultKind };
		}
		this.prune();
		return { delayMs, terminal: null };
	}

	/** The delivery fault for this attempt of a delivery to `url`, if one fires (the first that does). */
	pickDelivery(url: string, attempt: number): DeliveryFault | null {
		let path = url;
		try {
			path = new URL(url).pathname;
		} catch {
			// not a URL: match the string as given
		}
		let fired: DeliveryFault | null = null;
		for (const r of this.rules) {
			if (!DELIVERY_KINDS.includes(r.kind)) continue;
			if (r.remaining !== null && r.remaining <= 0) continue;
			if ((r.attempt ?? 1) !== attempt) continue;
			if (r.re && !r.re.test(path)) continue;
			r.seen++;
			if (fired || r.seen % (r.every ?? 1) !== 0) continue;
			if (r.remaining !== null) r.remaining--;
			r.hits++;
			fired = {
				kind: r.kind as DeliveryFaultKind,
				timeoutMs: r.timeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS,
			};
		}
		this.prune();
		return fired;
	}

	private prune() {
		this.rules = this.rules.filter((r) => r.remaining === null || r.remaining > 0);
	}
}
