import { useClock } from '../../nodes/shared/transport/clock';
import { RateLimiter } from '../../nodes/shared/transport/rateLimiter';
import {
	recoveryTurn,
	resetRecoveryPace,
	RecoveryPace,
	RECOVERY_REQUESTS_PER_MINUTE,
} from '../../nodes/LearningPlatformTrigger/recovery/pace';
import { EventClock, FakeClock } from '../support/fakeClock';
import { busiestWindow } from '../support/busiestWindow';

let time: FakeClock;
let restore: () => void;
beforeEach(() => {
	time = new FakeClock(5_000_000);
	restore = useClock(time);
	resetRecoveryPace();
});
afterEach(() => restore());

test('recovery takes a third of the 60 requests a minute: 20 at once, then one as each leaves the minute', async () => {
	expect(RECOVERY_REQUESTS_PER_MINUTE).toBe(20);
	const startedAt: number[] = [];
	for (let i = 0; i < 45; i++) {
		await recoveryTurn();
		startedAt.push(time.now() - 5_000_000);
	}
	expect(startedAt.slice(0, 20)).toEqual(Array(20).fill(0));
	expect(startedAt.slice(20, 40)).toEqual(Array(20).fill(60_000));
	expect(startedAt.slice(40)).toEqual(Array(5).fill(120_000));
	// in any 60 seconds, at most 20
	for (let i = 0; i + 20 < startedAt.length; i++)
		expect(startedAt[i + 20] - startedAt[i]).toBeGreaterThanOrEqual(60_000);
});

test('requests spread over time are not held back', async () => {
	for (let i = 0; i < 40; i++) {
		await recoveryTurn();
		await time.sleep(3_000);
	}
	// each sleep above is the test's own: recovery never waited
	expect(time.slept).toEqual(Array(40).fill(3_000));
});

// ---------------------------------------------------------------------------------------------
// Several n8n processes on one API key (queue mode: main and webhook processes run recovery, the
// workers run the team's workflows). Each simulated process has its own rate limiter and its own
// recovery pace, as separate processes do; they share only the platform's window, which each
// learns from its answers' X-RateLimit-Remaining. Time is an EventClock: the processes' waits
// overlap as they would.

const KEY = 'https://lms.example|42|api-user';
const LIMIT = 60;

/** The platform's sliding window for the key (spec, Limits), counting whose requests it took. */
class Platform {
	readonly counted: Array<{ at: number; recovery: boolean; who?: number }> = [];
	refused = 0;
	constructor(private readonly time: EventClock) {}

	answer(recovery: boolean, who?: number) {
		const now = this.time.now();
		const inWindow = this.counted.filter((r) => now - r.at < 60_000).length;
		if (inWindow >= LIMIT) {
			this.refused++;
			return { status: 429, headers: { 'x-ratelimit-limit': '60', 'retry-after': '1' } };
		}
		this.counted.push({ at: now, recovery, who });
		const remaining = String(LIMIT - inWindow - 1);
		return {
			status: 200,
			headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': remaining },
		};
	}

	/** The most requests of the kind asked for that the platform counted in any 60 seconds. */
	mostInAMinute(recovery: boolean) {
		const times = this.counted.filter((r) => r.recovery === recovery).map((r) => r.at);
		return busiestWindow(times, 60_000).most;
	}
}

/** A deterministic stand-in for chance (latencies, the run's random wait before a look). */
function chance(seed: number) {
	let state = seed;
	return (below: number) => {
		state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
		return Math.floor((state / 2 ** 31) * below);
	};
}

/** One simulated n8n process: its own rate limiter and recovery pace. */
class Process {
	readonly limiter: RateLimiter;
	readonly pace = new RecoveryPace();
	static count = 0;
	id = Process.count++;
	constructor(
		private readonly time: EventClock,
		private readonly platform: Platform,
		private readonly random: (below: number) => number,
	) {
		this.limiter = new RateLimiter(() => time);
	}

	readKeyUse = async () => this.limiter.keyUse(KEY);

	/** One request through the limiter, 40-240 ms there and back, repeated after a 429. */
	async request(recovery: boolean) {
		for (;;) {
			const ticket = await this.limiter.acquireSlot(KEY);
			await this.time.sleep(20 + this.random(100));
			const answer = this.platform.answer(recovery, this.id);
			await this.time.sleep(20 + this.random(100));
			this.limiter.recordAnswer(ticket, answer);
			if (answer.status !== 429) return;
		}
	}

	/** A recovery run with a backlog, as run.ts makes its requests until `until`. */
	async recover(until: number) {
		const turn = async () => await this.pace.turn(this.readKeyUse);
		while (this.time.now() < until) {
			await turn(); // a page of the log
			await this.request(true);
			for (let i = 0; i < 5 && this.time.now() < until; i++) {
				// each redispatch: its turn and the look's, the look, then the redispatch
				await turn();
				await this.time.sleep(this.random(250));
				await turn();
				await this.request(true);
				await this.request(true);
			}
		}
	}

	/** The team's workflows: `perMinute` requests a minute, evenly, until `until`. */
	async work(perMinute: number, until: number) {
		const start = this.time.now();
		for (let n = 1; this.time.now() < until; n++) {
			await this.request(false);
			await this.time.sleep(start + (n * 60_000) / perMinute - this.time.now());
		}
	}
}

describe('several processes on one key', () => {
	let clockTime: EventClock;
	let platform: Platform;
	let restoreClock: () => void;
	beforeEach(() => {
		clockTime = new EventClock(10_000_000);
		platform = new Platform(clockTime);
		restoreClock = useClock(clockTime);
	});
	afterEach(() => restoreClock());

	const processes = (count: number) =>
		Array.from({ length: count }, (_, i) => new Process(clockTime, platform, chance(i + 1)));

	test('recovery in three processes (queue mode: main and two webhook processes) takes at most 20 requests in any minute together, and keeps going', async () => {
		const start = clockTime.now();
		const until = start + 10 * 60_000;
		const runs = processes(3).map(async (p) => await p.recover(until));
		await clockTime.run(until + 120_000);
		await Promise.all(runs);

		// each process's run holds at most two turns not yet counted (a redispatch's and its look's),
		// which the others cannot see: TURNS_IN_FLIGHT_ELSEWHERE leaves room for them (without it:
		// up to 26 over 8 seeds of 2-4 processes)
		expect(platform.mostInAMinute(true)).toBeLessThanOrEqual(RECOVERY_REQUESTS_PER_MINUTE);
		// progress: three quarters of the share or more over ten minutes
		expect(platform.counted.length).toBeGreaterThanOrEqual(10 * 15);
		expect(platform.refused).toBe(0);
	});

	test("recovery waits while the team's workflows in other processes use the key heavily", async () => {
		const [recovery, worker] = processes(2);
		const start = clockTime.now();
		const until = start + 6 * 60_000;
		const busy = worker.work(45, until);
		// the team has been busy for a minute when recovery sets out
		await clockTime.run(start + 60_000);
		const run = recovery.recover(until);
		await clockTime.run(until + 120_000);
		await Promise.all([busy, run]);

		const team = platform.counted.filter((r) => !r.recovery).length;
		const recovered = platform.counted.length - team;
		// the team's 45 a minute went out; recovery took one request a minute or so beside them
		expect(team).toBeGreaterThanOrEqual(6 * 45);
		expect(platform.mostInAMinute(true)).toBeLessThanOrEqual(4);
		expect(recovered).toBeGreaterThan(0);
		expect(platform.refused).toBe(0);
	});

	test('a turn held back by others for a minute is taken while a third of the key is free', async () => {
		// the recovery process's own workflows keep its view of the key fresh; a worker's 25 a
		// minute alone would hold recovery back for as long as they last
		const [recovery, worker] = processes(2);
		const start = clockTime.now();
		const until = start + 11 * 60_000;
		const busy = [worker.work(25, until), recovery.work(4, until)];
		await clockTime.run(start + 60_000);
		const run = recovery.recover(until);
		await clockTime.run(until + 120_000);
		await Promise.all([...busy, run]);

		const recovered = platform.counted.filter((r) => r.recovery).length;
		// about one a minute (SHARE_WAIT_BOUND_MS), not none and not the share
		expect(recovered).toBeGreaterThanOrEqual(8);
		expect(platform.mostInAMinute(true)).toBeLessThanOrEqual(3);
		expect(platform.refused).toBe(0);
	});
});
