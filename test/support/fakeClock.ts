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

/**
 * A clock for several waiters at once (simulated processes): `sleep` resolves when `run` has moved
 * the clock to its end, earliest first, once everything that was not sleeping has settled. Unlike
 * FakeClock, two sleeps side by side overlap instead of adding up.
 */
export class EventClock implements Clock {
	private readonly timers: Array<{ at: number; seq: number; wake: () => void }> = [];
	private seq = 0;
	constructor(public at = 0) {}

	now() {
		return this.at;
	}

	async sleep(ms: number) {
		await new Promise<void>((wake) => {
			this.timers.push({ at: this.at + Math.max(0, ms), seq: this.seq++, wake });
		});
	}

	/** Moves time on, sleep by sleep, until `until` or until nothing sleeps. */
	async run(until: number) {
		for (;;) {
			await new Promise((resolve) => setImmediate(resolve));
			this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
			const next = this.timers[0];
			if (next === undefined || next.at > until) return;
			this.timers.shift();
			this.at = Math.max(this.at, next.at);
			next.wake();
		}
	}
}
