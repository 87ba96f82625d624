// Progress output of the harness: every step prints when it starts and how long it took, so a
// slow CI run shows where the time went.

const startedAt = Date.now();

const quiet = process.env.LP_HARNESS_QUIET === '1';

function stamp(): string {
	return `+${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s`;
}

export function log(message: string): void {
	if (!quiet) process.stderr.write(`[harness ${stamp()}] ${message}\n`);
}

export interface StepTiming {
	name: string;
	ms: number;
	ok: boolean;
}

/** Every step run in this process, in order (the e2e suite prints them at the end). */
const timings: StepTiming[] = [];

export function formatMs(ms: number): string {
	return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Runs `fn` as a named step: logs its start and its duration, and records the timing. */
export async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
	const t0 = Date.now();
	log(`${name} ...`);
	try {
		const result = await fn();
		const ms = Date.now() - t0;
		timings.push({ name, ms, ok: true });
		log(`${name}: done in ${formatMs(ms)}`);
		return result;
	} catch (error) {
		const ms = Date.now() - t0;
		timings.push({ name, ms, ok: false });
		log(`${name}: FAILED after ${formatMs(ms)}: ${(error as Error).message}`);
		throw error;
	}
}

export function timingReport(): string {
	return timings
		.map((t) => `${t.ok ? ' ' : '!'} ${formatMs(t.ms).padStart(9)}  ${t.name}`)
		.join('\n');
}
