/**
 * Time as the transport sees it. Waiting logic takes its `now` and `sleep` from here so that tests
 * can run minutes of waiting in milliseconds (`useClock` with a fake), while production code
 * uses the wall clock and n8n's own `sleep`.
 */
import { sleep } from 'n8n-workflow';

export interface Clock {
	now(): number;
	/** `signal` ends the wait early, rejecting, where the clock can (n8n 1.x's `sleep` cannot) */
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
	now: () => Date.now(),
	sleep: async (ms: number, signal?: AbortSignal) => await sleep(ms, signal),
};

let current: Clock = systemClock;

/** The clock in force (the system clock unless a test installed another). */
export function clock(): Clock {
	return current;
}

/** Installs `replacement` until the returned function is called, which restores the previous one. For tests. */
export function useClock(replacement: Clock): () => void {
	const previous = current;
	current = replacement;
	return () => {
		current = previous;
	};
}

/** For tests: back to the system clock, whatever was installed. */
export function resetClock(): void {
	current = systemClock;
}
