/**
 * Fault injection for spec paths (never /__sandbox): HTTP 500s, dropped connections, delays and
 * 429 bursts, each at a rate (0..1, default 1) and/or for exactly the next `count` matching
 * requests, optionally restricted by `pathPattern` (regex on the path) and `method`.
 * Rules are checked in order: delays add up, the first firing terminal fault (http500, drop,
 * http429) answers the request. Faults act before authentication and rate limiting (like a
 * gateway): a faulted request consumes nothing.
 */
import type { Prng } from './util';

export type FaultKind = 'http500' | 'drop' | 'delay' | 'http429';
export interface FaultSpec {
	kind: FaultKind;
	rate?: number;
	count?: number;
	delayMs?: number;
	pathPattern?: string;
	method?: string;
}
interface Rule extends FaultSpec {
	re: RegExp | null;
	remaining: number | null;
	hits: number;
}

export class Faults {
	private rules: Rule[] = [];

	/** Replaces the active rules; throws with a message on an invalid spec. */
	set(specs: FaultSpec[]) {
		const rules = specs.map((s): Rule => {
			if (!['http500', 'drop', 'delay', 'http429'].includes(s.kind))
				throw new Error(`unknown fault kind: ${String(s.kind)}`);
			if (s.rate !== undefined && (typeof s.rate !== 'number' || s.rate < 0 || s.rate > 1))
				throw new Error('rate must be a number in 0..1');
			if (s.count !== undefined && (!Number.isInteger(s.count) || s.count < 0))
				throw new Error('count must be a non-negative integer');
			if (s.kind === 'delay' && (typeof s.delayMs !== 'number' || s.delayMs < 0))
				throw new Error('delay faults need delayMs >= 0');
			return {
				...s,
				re: s.pathPattern ? new RegExp(s.pathPattern) : null,
				remaining: s.count ?? null,
				hits: 0,
			};
		});
		this.rules = rules;
	}

	clear() {
		this.rules = [];
	}

	list() {
		return this.rules.map(({ re: _re, ...r }) => r);
	}

	/** Which faults fire for this request: total delay and the terminal fault, if any. */
	pick(method: string, path: string, rng: Prng): { delayMs: number; terminal: FaultKind | null } {
		let delayMs = 0;
		for (const r of this.rules) {
			if (r.remaining !== null && r.remaining <= 0) continue;
			if (r.method && r.method.toUpperCase() !== method.toUpperCase()) continue;
			if (r.re && !r.re.test(path)) continue;
			if (r.rate !== undefined && rng.next() >= r.rate) continue;
			if (r.remaining !== null) r.remaining--;
			r.hits++;
			if (r.kind === 'delay') delayMs += r.delayMs ?? 0;
			else return { delayMs, terminal: r.kind };
		}
		this.rules = this.rules.filter((r) => r.remaining === null || r.remaining > 0);
		return { delayMs, terminal: null };
	}
}
