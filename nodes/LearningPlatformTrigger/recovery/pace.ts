// The share of the API key's requests that recovery may take: the key allows 60 a minute (spec,
// Limits) for every workflow that uses it, and a run after a long outage could otherwise take
// them all for minutes, failing the HR team's own workflows with 429s. Recovery runs of this
// process together make at most a third of that in any 60 seconds; the transport's rate limiter
// still paces all requests of the key. docs/design.md, "Missed deliveries".
import { clock } from '../../shared/transport';

export const RECOVERY_REQUESTS_PER_MINUTE = 20;
const WINDOW_MS = 60_000;

// Process-wide: when recovery's requests in the last minute started, ascending.
let started: number[] = [];

/** Waits until a recovery request may start without passing the share, and counts it. */
export async function recoveryTurn(): Promise<void> {
	for (;;) {
		const now = clock().now();
		started = started.filter((at) => now - at < WINDOW_MS);
		if (started.length < RECOVERY_REQUESTS_PER_MINUTE) {
			started.push(now);
			return;
		}
		await clock().sleep(started[0] + WINDOW_MS - now);
	}
}

/** For tests: as in a process that has made no recovery request. */
export function resetRecoveryPace(): void {
	started = [];
}
