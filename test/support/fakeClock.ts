import { useClock, type Clock } from '../../nodes/shared/transport/clock';

/**
 * A clock that stands still until slept: `sleep(ms)` moves it by `ms` and records the pause, then
 * lets the event loop turn once; `onSleep` lets a test act at a virtual instant.
 */
export class FakeClock implements Clock {
	slept: number[] = [];
	onSleep?: (now: number) => void;
	constructor(public at = 1_000_000) {}

	now() {
		return this.at;
	}

	async sleep(ms: number) {
		this.slept.push(ms);
		this.at += ms;
		await Promise.resolve();
		this.onSleep?.(this.at);
	}
}

/**
 * A clock that runs ahead of the wall clock: `sleep(ms)` moves it forward by `ms` at once (after
 * one turn of the event loop), so the transport's minute-long waits take no real time while real
 * HTTP still flows. `onSleep` lets a test act at a virtual instant (e.g. a slow store finishing).
 */
export class AheadClock implements Clock {
	offset = 0;
	slept = 0;
	onSleep?: (virtualElapsed: number) => void;
	private readonly started = Date.now();

	/** `holdFrom`: sleeps this long or longer never end (a schedule that must not run on). */
	constructor(private readonly holdFrom = Infinity) {}

	now() {
		return Date.now() + this.offset;
	}

	async sleep(ms: number) {
		if (ms >= this.holdFrom) return await new Promise<void>(() => {});
		this.offset += ms;
		this.slept += ms;
		await new Promise((resolve) => setImmediate(resolve));
		this.onSleep?.(this.now() - this.started);
	}
}

/** Installs an AheadClock for the duration of `body`. */
export async function withAheadClock<T>(
	body: (time: AheadClock) => Promise<T>,
	holdFrom?: number,
): Promise<T> {
	const time = new AheadClock(holdFrom);
	const restore = useClock(time);
	try {
		return await body(time);
	} finally {
		restore();
	}
}
