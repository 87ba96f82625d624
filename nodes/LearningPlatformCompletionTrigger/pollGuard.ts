// Which Completion Trigger polls are running in this n8n process. n8n does not wait for one poll
// to end before it starts the next (n8n 2.40.7's cron starts two at once when the clock has
// jumped forward: a machine resumed, an NTP step; a poll slower than the interval overlaps the
// next). Two polls of one trigger would read the same position and emit the same records, so a
// poll that starts while another of its trigger runs emits nothing: the running one reads to the
// feed's end. docs/design.md, "The Completion Trigger's position in the feed".

/** A poll running longer than this is taken as abandoned (n8n gave up on it, or it hangs). */
export const ABANDONED_POLL_MS = 15 * 60_000;

const running = new Map<string, number>();

/** Takes the turn of a trigger (its `triggerScope`); false while another poll of it runs here. */
export function startPoll(key: string, now: number): boolean {
	const since = running.get(key);
	if (since !== undefined && now - since < ABANDONED_POLL_MS) return false;
	running.set(key, now);
	return true;
}

/** Gives the turn back once the poll's position is written (or the poll failed). */
export function finishPoll(key: string, startedAt: number): void {
	if (running.get(key) === startedAt) running.delete(key);
}

/** For tests: a new process (no poll running). */
export function resetPollGuard(): void {
	running.clear();
}
