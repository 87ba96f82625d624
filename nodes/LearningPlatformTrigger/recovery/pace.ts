// The share of the API key's requests that recovery may take: the key allows 60 a minute (spec,
// Limits) for every workflow that uses it, and a run after a long outage could otherwise take
// them all for minutes, failing the HR team's own workflows with 429s. Recovery takes at most a
// third, counted over every n8n process of the instance: in queue mode the main and webhook
// processes each run recovery and none knows the others' runs, so each process leaves room for
// all the key's use it sees from elsewhere (the answers' X-RateLimit-Remaining), which may be
// other processes' recovery. The transport's rate limiter still paces all requests of the key.
// docs/design.md, "Missed deliveries".
import { clock, type KeyUse } from '../../shared/transport';

export const RECOVERY_REQUESTS_PER_MINUTE = 20;
const WINDOW_MS = 60_000;
/**
 * A turn that has waited this long for others' use of the key to fall settles for less: one
 * request while a third of the key is free. Others that never fall below the share (the team's
 * busy hour in queue mode's workers, which this process cannot tell from recovery elsewhere)
 * would otherwise hold recovery back for as long as they last.
 */
export const SHARE_WAIT_BOUND_MS = 60_000;
/**
 * Room left, while others use the key, for turns other processes' runs have taken but whose
 * requests no answer has shown yet (a redispatch's turn and its look's, taken before either goes):
 * without it, three processes recovering at once took up to 26 in a minute in simulation, 21 in
 * real n8n (queue mode, two webhook processes); with it, 20 at most with three (22 with four).
 */
export const TURNS_IN_FLIGHT_ELSEWHERE = 5;
/** While others' use holds a turn back: any answer, to any request of the key, may show it fall. */
const LOOK_AGAIN_MS = 1_000;

/** The key's window as this process sees it now; undefined when it cannot tell. */
export type KeyUseReader = () => Promise<KeyUse | undefined>;

/** Recovery's share of a key that allows `limit` a minute: a third, at most 20. */
export function recoveryShare(limit: number): number {
	return Math.max(1, Math.min(RECOVERY_REQUESTS_PER_MINUTE, Math.floor(limit / 3)));
}

/**
 * Whether one more recovery request of this process (`mine` of them in the window already) fits,
 * as `use` shows the key.
 */
function fitsShare(use: KeyUse | undefined, mine: number, waitedLong: boolean): boolean {
	if (use === undefined) return true;
	const share = recoveryShare(use.limit);
	// each of the others' requests may be another process's recovery: only the rest is ours
	// as many as the others' use shows, up to the most their runs can hold: a process that sees a
	// request or two of others' (a note, a question) keeps nearly all of the share
	const inFlight = Math.min(TURNS_IN_FLIGHT_ELSEWHERE, use.others);
	if (mine + use.others + inFlight + 1 <= share) return true;
	return waitedLong && use.ours + use.others + 1 <= use.limit - share;
}

/** Recovery's pace in one process: its own requests' start times, and the key's use as it sees it. */
export class RecoveryPace {
	// when this process's recovery requests in the last minute started, ascending
	private started: number[] = [];

	/** Waits until a recovery request may start without passing the share, and counts it. */
	async turn(readKeyUse?: KeyUseReader): Promise<void> {
		const since = clock().now();
		for (;;) {
			let now = clock().now();
			this.started = this.started.filter((at) => now - at < WINDOW_MS);
			if (this.started.length >= RECOVERY_REQUESTS_PER_MINUTE) {
				await clock().sleep(this.started[0] + WINDOW_MS - now);
				continue;
			}
			const use = await readKeyUse?.();
			now = clock().now();
			this.started = this.started.filter((at) => now - at < WINDOW_MS);
			if (fitsShare(use, this.started.length, now - since >= SHARE_WAIT_BOUND_MS)) {
				this.started.push(now);
				return;
			}
			await clock().sleep(LOOK_AGAIN_MS);
		}
	}
}

// Process-wide: every recovery run of this process takes its turns here.
let processPace = new RecoveryPace();

/**
 * Waits until a recovery request may start without passing the share, and counts it.
 * `readKeyUse`: the key's window as this process sees it; without it, only this process's own
 * recovery requests count.
 */
export async function recoveryTurn(readKeyUse?: KeyUseReader): Promise<void> {
	await processPace.turn(readKeyUse);
}

/** For tests: as in a process that has made no recovery request. */
export function resetRecoveryPace(): void {
	processPace = new RecoveryPace();
}
