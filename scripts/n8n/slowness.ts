// Waits that follow how slow this machine is right now. A fixed time-out that suits an idle
// machine fails on a loaded one (CI neighbours, a remote database), and one that suits the worst
// case hides real hangs. The harness measures how long n8n's main process took to become ready,
// compares it with an idle start on this machine type, and stretches every wait by that factor.
import { log } from './log';

/** An idle 2-core machine starts n8n 2.40.7 (migrated database, package loaded) in about this. */
const IDLE_START_MS = 20_000;
/** Never shrink a wait, never stretch one beyond this (a hang must still end). */
const MAX_FACTOR = 6;

let factor =
	Number(process.env.LP_WAIT_FACTOR) > 0
		? Math.min(MAX_FACTOR, Number(process.env.LP_WAIT_FACTOR))
		: 1;

/** Records how long an n8n main process took to become ready. */
export function recordStartTime(ms: number): void {
	const measured = Math.min(MAX_FACTOR, ms / IDLE_START_MS);
	if (measured > factor) {
		factor = measured;
		log(
			`n8n started in ${(ms / 1000).toFixed(1)} s (idle: ~${IDLE_START_MS / 1000} s): waits are stretched x${factor.toFixed(1)}`,
		);
	}
}

/** The current stretch factor (>= 1). */
export function waitFactor(): number {
	return Math.max(1, factor);
}

/** `ms` stretched by how slow n8n started on this machine. */
export function scaled(ms: number): number {
	return Math.round(ms * waitFactor());
}
