// Which failed entries of a delivery log are continued by a later attempt, under a log of one entry
// per attempt (`tries` is the attempt's number). Entries carry no delivery identity, so attempts
// are told apart by what the platform's retrying must look like. Pure. Why: docs/design.md,
// "Missed deliveries".

import type { DeliveryLogEntry } from './deliveryLog';

/** An attempt logged up to this long before the previous attempt's answer still follows it. */
const LOG_TIME_TOLERANCE_MS = 1_000;
/** More distinct answers than this at one attempt number: no attempt is taken as continued. */
const MAX_ANSWERS_WEIGHED = 8;

export interface Timed {
	entry: DeliveryLogEntry;
	created: number;
	updated: number;
}

type Status = number | null;
const statusOf = (entry: DeliveryLogEntry): Status => entry.status_code ?? null;

/** Answers a platform that retries anything retries: none, a time-out, too many requests, 5xx. */
const retriedByAnyRetryingPlatform = (status: Status): boolean =>
	status === null || status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * The ids of the failed attempts (`failed`) that a later attempt (of `later`) continues, so that
 * no delivery the platform gave up on is taken for continued. A platform retries an answer or not
 * whichever delivery got it (the spec does not say which answers it retries), so for each event
 * and attempt number n:
 * - each set R of the answers seen at attempt n may be what the platform retries: R is possible
 *   when every attempt n+1 can be matched to its own failed attempt n answered with one of R
 *   before it was sent (`matchAttempts`);
 * - an attempt n is continued when it is matched under every possible R. One that some possible
 *   R leaves unmatched is the last word on its delivery: it is redispatched, and the ledger
 *   recognises the delivery if it went through after all.
 * No possible R (one entry per delivery, where `tries` counts a delivery's own attempts): none is
 * continued.
 */
export function continuedAttempts(failed: Timed[], later: Timed[]): Set<number> {
	const continued = new Set<number>();
	const groups = new Map<string, { failed: Timed[]; next: Timed[] }>();
	const group = (event: string | undefined, tries: number) => {
		const key = `${tries}\n${event ?? ''}`;
		let found = groups.get(key);
		if (!found) groups.set(key, (found = { failed: [], next: [] }));
		return found;
	};
	for (const attempt of failed)
		group(attempt.entry.event_type, attempt.entry.tries ?? 0).failed.push(attempt);
	for (const attempt of later) {
		const tries = attempt.entry.tries ?? 0;
		if (tries >= 2) group(attempt.entry.event_type, tries - 1).next.push(attempt);
	}
	for (const { failed: attempts, next } of groups.values()) {
		if (attempts.length === 0 || next.length === 0) continue;
		attempts.sort((a, b) => a.updated - b.updated || a.entry.id - b.entry.id);
		next.sort((a, b) => a.created - b.created || a.entry.id - b.entry.id);
		const answers = [...new Set(attempts.map(({ entry }) => statusOf(entry)))];
		if (answers.length > MAX_ANSWERS_WEIGHED) continue;
		let everywhere: Set<number> | undefined;
		for (let subset = 1; subset < 2 ** answers.length; subset++) {
			const retried = new Set(answers.filter((_, bit) => subset & (2 ** bit)));
			const matched = matchAttempts(
				attempts.filter(({ entry }) => retried.has(statusOf(entry))),
				next,
			);
			if (!matched) continue;
			everywhere = everywhere ? new Set([...everywhere].filter((id) => matched.has(id))) : matched;
		}
		for (const id of everywhere ?? []) continued.add(id);
	}
	return continued;
}

/**
 * Each later attempt matched to its own earlier failed attempt, the nearest free one answered
 * before it was sent (an older one left over may be a delivery the platform stopped retrying, a
 * newer one's retry may still come); undefined when one is left without. An attempt answered
 * with a status that not every retrying platform retries goes to a later attempt answered alike,
 * being good for nothing else.
 */
function matchAttempts(attempts: Timed[], next: Timed[]): Set<number> | undefined {
	const matched = new Set<number>();
	const retriable: Timed[] = [];
	const alike = new Map<Status, Timed[]>();
	let eligible = 0;
	for (const attempt of next) {
		const sent = attempt.created + LOG_TIME_TOLERANCE_MS;
		for (; eligible < attempts.length && attempts[eligible].updated <= sent; eligible++) {
			const earlier = attempts[eligible];
			const status = statusOf(earlier.entry);
			if (retriedByAnyRetryingPlatform(status)) retriable.push(earlier);
			else {
				let answeredAlike = alike.get(status);
				if (!answeredAlike) alike.set(status, (answeredAlike = []));
				answeredAlike.push(earlier);
			}
		}
		const chosen =
			takeNearest(alike.get(statusOf(attempt.entry)), attempt) ?? takeNearest(retriable, attempt);
		if (!chosen) return undefined;
		matched.add(chosen.entry.id);
	}
	return matched;
}

/**
 * Takes the newest of `free` (answered in time, oldest first) logged before `attempt`: within
 * the tolerance an attempt answered in time may have been logged after it.
 */
function takeNearest(free: Timed[] | undefined, attempt: Timed): Timed | undefined {
	if (!free) return undefined;
	for (let i = free.length - 1; i >= 0; i--) {
		const { created, entry } = free[i];
		if (created < attempt.created || (created === attempt.created && entry.id < attempt.entry.id))
			return free.splice(i, 1)[0];
	}
	return undefined;
}
