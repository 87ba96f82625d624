import type { FeedState } from './feedState';

// What this n8n process knows of each Completion Trigger's polls beyond its static data: which
// poll is running, and the newest position a poll wrote. Two things would otherwise read a
// position without the records another poll just emitted, and emit them again:
// - n8n starts a poll on every tick without waiting for the previous one (a slow answer, a wait
//   for the rate limit), and both would read the same position;
// - a re-published workflow (n8n re-publishes at start and when it finds a trigger missing)
//   starts from the copy of its static data in the database, which n8n writes after a poll
//   returns, without waiting, and which can be one poll behind.
// docs/design.md, "The Completion Trigger's position in the feed".

/** A poll running longer than this is taken as abandoned (n8n gave up on it, or it hangs). */
export const ABANDONED_POLL_MS = 15 * 60_000;
/** Positions remembered at most (one per active trigger; the oldest goes first beyond it). */
const REMEMBERED_LIMIT = 1000;

const running = new Map<string, number>();
const newest = new Map<string, FeedState>();

/** One trigger: its workflow and its node (ids, so renaming the node changes nothing). */
export function triggerKey(workflowId: string | undefined, nodeId: string): string {
	return `${workflowId ?? ''}\u0000${nodeId}`;
}

/** Takes the trigger's turn; false while another poll of it runs in this process. */
export function startPoll(key: string, now: number): boolean {
	const since = running.get(key);
	if (since !== undefined && now - since < ABANDONED_POLL_MS) return false;
	running.set(key, now);
	return true;
}

/** Gives the turn back, once the poll's position is written (or the poll failed). */
export function finishPoll(key: string, startedAt: number): void {
	if (running.get(key) === startedAt) running.delete(key);
}

/** Remembers the position a poll of this trigger just wrote. */
export function rememberPosition(key: string, state: FeedState): void {
	newest.delete(key);
	newest.set(key, state);
	if (newest.size > REMEMBERED_LIMIT) newest.delete(newest.keys().next().value as string);
}

/**
 * The position this process wrote last, when the loaded one is an older copy of the same line
 * (same lineage, lower revision); undefined when the loaded one is current or of another line
 * (the position started over: a changed start setting, cleared static data).
 */
export function newerPosition(key: string, loaded: FeedState): FeedState | undefined {
	const remembered = newest.get(key);
	if (!remembered || loaded.lineage === '' || remembered.lineage !== loaded.lineage) return;
	return remembered.revision > loaded.revision
		? { ...remembered, seen: { ...remembered.seen } }
		: undefined;
}

/** For tests: a new process (nothing running, nothing remembered). */
export function resetPollGuard(): void {
	running.clear();
	newest.clear();
}
