/**
 * Row 4e, recovery's API cost (issue #48): the requests per day that one workflow's recovery of
 * missed deliveries costs, measured as test/trigger/recoveryCost.test.ts measures it: the trigger
 * in this process behind an https n8n of the bench's own (test/support/recoveryHarness.ts; it drops
 * every connection while the platform cannot reach it or n8n is down), the sandbox API in its own
 * process, n8n's clock and the platform's moved together, the schedule's 15-minute checks
 * released one at a time, recovery's requests counted from the sandbox's request log (log pages,
 * redispatches, `/relay` questions).
 *
 * 1. nothing failing, 1,000 completions a day, a day; 2. the same at 10,000 a day, for a few
 * hours, scaled to a day; 3. n8n down 60 hours at 1,000 a day, then back; 4. n8n running but
 * unreachable for 3 days at 300 a day, then reachable again.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { RECOVERY_HORIZON_MS } from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';
import {
	RESCAN_INTERVAL_MS,
	resetRecoveryState,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { resetDeliveryLedger } from '../../nodes/LearningPlatformTrigger/deliveries/processLedgers';
import type { SandboxClient } from '../../sandbox/client';
import { makeCertificates } from '../../scripts/n8n/tls-front';
import {
	completionKey,
	mostInAnyDay,
	movedClocks,
	RECOVERING,
	RecoveringN8n,
	recoveryIdle,
	recoveryRequests,
	recoveryRequestsSettled,
} from '../../test/support/recoveryHarness';
import type { RowOptions } from '../run';
import {
	envListed,
	failedResult,
	fixed,
	metric,
	newApiUser,
	progress,
	startBenchSandbox,
	type Metric,
	type RowResult,
} from '../lib/common';
import { LearningPlatformTrigger } from '../lib/nodes';

const ID = 'recovery-cost';
const TITLE = "Recovery's API cost per workflow";
const QUARTER = RESCAN_INTERVAL_MS;
const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
/** a quarter hour's completions arrive at this many moments at most, the clocks moved between */
const MAX_ARRIVALS = 15;
/** completions asked of the sandbox at once */
const BATCH = 25;

/** The scenarios' sizes (LP_BENCH_RECOVERY_*, or the defaults, smaller under --quick). */
function sizes(quick: boolean) {
	const env: Record<string, string> = {};
	const read = (key: string, full: number, small: number) => {
		const set = process.env[`LP_BENCH_RECOVERY_${key}`];
		if (set) env[`LP_BENCH_RECOVERY_${key}`] = set;
		return set ? Number(set) : quick ? small : full;
	};
	const only = process.env.LP_BENCH_RECOVERY_SCENARIOS;
	if (only) env.LP_BENCH_RECOVERY_SCENARIOS = only;
	return {
		env,
		sizes: {
			steadyDays: read('STEADY_DAYS', 1, 0.25),
			busyHours: read('BUSY_HOURS', 24, 2),
			outageHours: read('OUTAGE_HOURS', 60, 12),
			unreachableDays: read('UNREACHABLE_DAYS', 3, 0.5),
			scenarios: only ? only.split(',').map(Number) : [1, 2, 3, 4],
		},
	};
}

/** One scenario's figures: requests by kind, executions against completions. */
interface Line {
	scenario: string;
	perDay: number;
	days: number;
	/** requests of each kind over `days` (the period the per-day figures are of) */
	log: number;
	redispatch: number;
	relay: number;
	/** completions that should have run (made, or missed within reach), and what ran */
	completions: number;
	executions: number;
	lost: number;
	duplicates: number;
	target: string;
	met: boolean;
	notes: string[];
}

/** One scenario's world: a sandbox, an API user, the bench's n8n with its trigger. */
interface World {
	platform: SandboxClient;
	username: string;
	n8n: RecoveringN8n;
	subscriptionId: number;
	/** completion ids made, and when (n8n's clock) */
	made: Map<string, number>;
	close(): Promise<void>;
}

let certificates: Awaited<ReturnType<typeof makeCertificates>> | undefined;

async function world(name: string): Promise<World> {
	certificates ??= await makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-rc-')));
	const sandbox = await startBenchSandbox({
		rateLimitPerMinute: 100_000,
		demo: true,
		trustCaFile: certificates.caCertFile,
		logName: `recovery-${name}`,
	});
	// one quick attempt a delivery, as the trigger tests; a loaded machine's slow answer waited for
	await sandbox.control.setConfig({ deliveryMaxAttempts: 1, deliveryTimeoutMs: 30_000 });
	const { username, credentials } = await newApiUser(sandbox, `recovery-${name}`);
	const n8n = new RecoveringN8n(new LearningPlatformTrigger(), credentials);
	await n8n.listen(certificates);
	resetRecoveryState();
	resetDeliveryLedger();
	const { subscriptionId } = await n8n.subscribe(name, RECOVERING);
	return {
		platform: sandbox.control,
		username,
		n8n,
		subscriptionId,
		made: new Map(),
		close: async () => {
			resetRecoveryState();
			await n8n.close();
			await sandbox.stop();
		},
	};
}

/**
 * A quarter hour of traffic at `perDay`: its share of completions spread over it, one at a time up
 * to MAX_ARRIVALS a quarter (each in the middle of its slice of the quarter hour), the clocks moved
 * by `pass` in between (the schedule's sleep, if any, ends at the quarter's end).
 */
async function quarterOfTraffic(
	w: World,
	perDay: number,
	quarter: number,
	pass: (ms: number) => Promise<unknown>,
	now: () => number,
): Promise<void> {
	const share = (q: number) => Math.floor((q * perDay) / (DAY / QUARTER));
	const count = share(quarter + 1) - share(quarter);
	const slices = Math.max(1, Math.min(MAX_ARRIVALS, count));
	for (let slice = 0; slice < slices; slice++) {
		await pass(QUARTER / slices / 2);
		let left = Math.floor(((slice + 1) * count) / slices) - Math.floor((slice * count) / slices);
		while (left > 0) {
			const batch = Math.min(BATCH, left);
			left -= batch;
			const made = await Promise.all(
				Array.from({ length: batch }, () => w.platform.simulateCompletion({})),
			);
			for (const { completion } of made)
				w.made.set(completionKey(completion.completionid, String(completion.timecompleted)), now());
		}
		await w.platform.waitUntilDeliveriesSettled(120_000);
		// a run these deliveries set off goes at its own pace before time moves on
		await recoveryIdle();
		await w.platform.waitUntilDeliveriesSettled(120_000);
		await pass(QUARTER / slices / 2);
	}
}

/** The trigger's recovery requests by kind, since `from` requests (an index into the list). */
async function requestKinds(w: World, from = 0) {
	const requests = (await recoveryRequests(w.platform, w.username, w.subscriptionId)).slice(from);
	const redispatch = requests.filter((r) => r.path.endsWith('/redispatch')).length;
	const relay = requests.filter((r) => r.path.endsWith('/relay')).length;
	return { all: requests.length, redispatch, relay, log: requests.length - redispatch - relay };
}

/** Executions of `ids`: how many never ran, how many ran more than once (the extra runs). */
function runsOf(n8n: RecoveringN8n, ids: string[]) {
	const lost = ids.filter((id) => !n8n.executions.has(id)).length;
	const duplicates = ids.reduce(
		(sum, id) => sum + Math.max(0, (n8n.executions.get(id) ?? 0) - 1),
		0,
	);
	const executed = ids.reduce((sum, id) => sum + (n8n.executions.get(id) ?? 0), 0);
	return { lost, duplicates, executed };
}

/** Scenarios 1 and 2: nothing fails; `hours` of traffic at `perDay`, a check each quarter hour. */
async function nothingFailing(perDay: number, hours: number): Promise<Line> {
	const w = await world(`steady-${perDay}`);
	const clocks = await movedClocks(w.platform, { together: true });
	try {
		const quarters = Math.round((hours * HOUR) / QUARTER);
		const start = clocks.time.now();
		const logPerQuarter: number[] = [];
		for (let quarter = 0; quarter < quarters; quarter++) {
			const before = (await requestKinds(w)).log;
			await quarterOfTraffic(w, perDay, quarter, clocks.pass, () => clocks.time.now());
			await clocks.nextCheck();
			logPerQuarter.push((await requestKinds(w)).log - before);
			if (quarter % 16 === 15)
				progress(`recovery-cost: ${perDay}/day, ${(quarter + 1) / 4} h of ${hours} simulated`);
		}
		await recoveryRequestsSettled(w.platform, w.username, w.subscriptionId, 5);
		const kinds = await requestKinds(w);
		const days = (clocks.time.now() - start) / DAY;
		const runs = runsOf(w.n8n, [...w.made.keys()]);
		const logPerDay = kinds.log / days;
		const twice = logPerQuarter.filter((n) => n >= 2).length;
		return {
			scenario: `nothing failing, ${perDay.toLocaleString('en')}/day`,
			perDay,
			days,
			...kinds,
			completions: w.made.size,
			executions: runs.executed,
			lost: runs.lost,
			duplicates: runs.duplicates,
			target: '≤ 96 log requests/day (1 per 15 min), nothing else',
			met: logPerDay <= 96 && kinds.redispatch === 0 && kinds.relay === 0,
			notes: [
				`log requests per quarter hour: at most ${Math.max(...logPerQuarter)}, 2 or more in ${twice} of ${quarters} quarters, none in ${logPerQuarter.filter((n) => n === 0).length}`,
				`${w.n8n.repeats} deliveries acknowledged as repeats`,
			],
		};
	} finally {
		clocks.restore();
		await w.close();
	}
}

/** Missed completions within recovery's reach at `at`: made less than 73 h (less half an hour) before. */
function withinReach(made: Map<string, number>, at: number): string[] {
	return [...made]
		.filter(([, madeAt]) => at - madeAt < RECOVERY_HORIZON_MS - 30 * 60_000)
		.map(([id]) => id);
}

/**
 * After n8n or the platform's way to it is back: quarter hours of traffic at `perDay`, a check
 * each, until every one of `missed` has run (and two more checks), at most `maxHours`; the time
 * that took on n8n's clock (the runs' own waits move it too).
 */
async function recoverAfter(
	w: World,
	clocks: Awaited<ReturnType<typeof movedClocks>>,
	perDay: number,
	missed: string[],
	maxHours: number,
): Promise<number> {
	const start = clocks.time.now();
	let quarter = 0;
	let after = 0;
	while (after < 2 && quarter < (maxHours * HOUR) / QUARTER) {
		await quarterOfTraffic(w, perDay, quarter++, clocks.pass, () => clocks.time.now());
		await clocks.nextCheck();
		if (missed.every((id) => w.n8n.executions.has(id))) after++;
		if (quarter % 8 === 0)
			progress(
				`recovery-cost: ${missed.filter((id) => w.n8n.executions.has(id)).length} of ${missed.length} missed ran, ${quarter / 4} h after`,
			);
	}
	await recoveryRequestsSettled(w.platform, w.username, w.subscriptionId, 5);
	return clocks.time.now() - start;
}

/** When (minutes after `backAt`, n8n's clock) the first and the last of `ids` first ran. */
function recoveredIn(n8n: RecoveringN8n, ids: string[], backAt: number) {
	const at = ids.map((id) => n8n.firstRunAt.get(id)).filter((t): t is number => t !== undefined);
	return {
		first: at.length ? (Math.min(...at) - backAt) / 60_000 : NaN,
		last: at.length ? (Math.max(...at) - backAt) / 60_000 : NaN,
	};
}

/** Scenario 3: n8n down for `hours` (deliveries fail), then back: its memory is gone, the database kept. */
async function outage(perDay: number, hours: number): Promise<Line> {
	const w = await world('outage');
	let clocks = await movedClocks(w.platform, { together: true });
	try {
		for (let quarter = 0; quarter < 4; quarter++) {
			await quarterOfTraffic(w, perDay, quarter, clocks.pass, () => clocks.time.now());
			await clocks.nextCheck();
		}
		await recoveryRequestsSettled(w.platform, w.username, w.subscriptionId, 5);
		const before = w.made.size;
		const atDown = (await requestKinds(w)).all;
		// n8n stops: its schedule with it (left asleep on the old clock), nobody answers deliveries
		w.n8n.reachable = false;
		clocks.restore();
		clocks = await movedClocks(w.platform, { together: true });
		const downQuarters = Math.round((hours * HOUR) / QUARTER);
		for (let quarter = 0; quarter < downQuarters; quarter++)
			await quarterOfTraffic(w, perDay, 4 + quarter, clocks.pass, () => clocks.time.now());
		const missed = [...w.made.keys()].slice(before);
		const during = (await requestKinds(w)).all - atDown;
		progress(`recovery-cost: n8n down ${hours} h, ${missed.length} completions missed; back`);
		// n8n starts again: nothing in memory (2.x calls no trigger method at start: the first
		// delivery sets recovery off), the database as it was
		resetRecoveryState(clocks.time.now());
		resetDeliveryLedger();
		w.n8n.reachable = true;
		const backAt = clocks.time.now();
		const reach = withinReach(new Map(missed.map((id) => [id, w.made.get(id)!])), backAt);
		const atBack = (await requestKinds(w)).all;
		const days = (await recoverAfter(w, clocks, perDay, reach, 24)) / DAY;
		const kinds = await requestKinds(w, atBack);
		const runs = runsOf(w.n8n, reach);
		const all = runsOf(w.n8n, [...w.made.keys()]);
		const took = recoveredIn(w.n8n, reach, backAt);
		return {
			scenario: `n8n down ${hours} h, ${perDay.toLocaleString('en')}/day`,
			perDay,
			days,
			...kinds,
			completions: reach.length,
			executions: runs.executed,
			lost: runs.lost,
			duplicates: runs.duplicates,
			target: 'every missed completion within reach runs exactly once',
			met: runs.lost === 0 && runs.duplicates === 0,
			notes: [
				`during the outage: ${during} requests (n8n down); after it, the per-day figures are of the ${fixed(days * 24, 2)} h simulated after n8n came back (until all ran and two checks more): ${kinds.all} requests in all (${kinds.log} log, ${kinds.redispatch} redispatches, ${kinds.relay} relay)`,
				`${missed.length} missed, ${reach.length} within reach; the first ran ${fixed(took.first, 0)} min and the last ${fixed(took.last, 0)} min after n8n came back`,
				`all ${w.made.size} completions of the scenario (before, during and after): ${all.lost} lost, ${all.duplicates} duplicates`,
			],
		};
	} finally {
		clocks.restore();
		await w.close();
	}
}

/**
 * Scenario 4: n8n runs but the platform cannot reach it for `days` (every delivery fails), then
 * it can again: the during line, and the after line.
 */
async function unreachable(perDay: number, days: number): Promise<Line[]> {
	const w = await world('unreachable');
	const clocks = await movedClocks(w.platform, { together: true });
	try {
		await recoveryRequestsSettled(w.platform, w.username, w.subscriptionId, 3);
		w.n8n.reachable = false;
		const atStart = (await requestKinds(w)).all;
		const quarters = Math.round((days * DAY) / QUARTER);
		const start = clocks.time.now();
		for (let quarter = 0; quarter < quarters; quarter++) {
			await quarterOfTraffic(w, perDay, quarter, clocks.pass, () => clocks.time.now());
			await clocks.nextCheck();
			if (quarter % 48 === 47)
				progress(`recovery-cost: unreachable, ${(quarter + 1) / 4} h of ${days * 24} simulated`);
		}
		await recoveryRequestsSettled(w.platform, w.username, w.subscriptionId, 5);
		const missed = new Map(w.made);
		const during = await requestKinds(w, atStart);
		const daysDuring = (clocks.time.now() - start) / DAY;
		const requestTimes = (await recoveryRequests(w.platform, w.username, w.subscriptionId))
			.slice(atStart)
			.map((request) => Date.parse(request.at));
		const perDayDuring = mostInAnyDay(requestTimes);
		const ranMeanwhile = runsOf(w.n8n, [...missed.keys()]).executed;
		// reachable again, with no completion to tell the platform: the next check finds it
		w.n8n.reachable = true;
		const backAt = clocks.time.now();
		const reach = withinReach(missed, backAt + QUARTER);
		const atBack = atStart + during.all;
		const afterMs = await recoverAfter(w, clocks, perDay, reach, 24);
		const after = await requestKinds(w, atBack);
		const runs = runsOf(w.n8n, reach);
		const took = recoveredIn(w.n8n, reach, backAt);
		const inReach = new Set(reach);
		const beyond = [...missed.keys()].filter(
			(id) => !inReach.has(id) && w.n8n.executions.has(id),
		).length;
		const perMissed = during.redispatch / Math.max(1, missed.size);
		return [
			{
				scenario: `unreachable ${fixed(days, 1)} days (n8n runs), ${perDay}/day`,
				perDay,
				days: daysDuring,
				...during,
				completions: missed.size,
				executions: ranMeanwhile,
				lost: 0,
				duplicates: 0,
				target: '≤ 3 redispatches per missed completion, ≤ 100 recovery requests/day',
				met: perMissed <= 3 && perDayDuring.most <= 100,
				notes: [
					`unreachable: recovery requests in any 24 hours (the platform's clock) at most ${perDayDuring.most}; per 24 hours from the first ${perDayDuring.days.join(', ')} (the first holds the runs that found the outage); ${during.redispatch} redispatches for ${missed.size} missed completions (${fixed(perMissed, 2)} each); ${ranMeanwhile} ran meanwhile`,
				],
			},
			{
				scenario: `… reachable again, ${perDay}/day`,
				perDay,
				days: afterMs / DAY,
				...after,
				completions: reach.length,
				executions: runs.executed,
				lost: runs.lost,
				duplicates: runs.duplicates,
				target: 'every missed completion runs once, within 16 min',
				met: runs.lost === 0 && runs.duplicates === 0 && took.last <= 16,
				notes: [
					`reachable again: ${missed.size} missed, ${reach.length} within reach; the first ran ${fixed(took.first, 0)} min and the last ${fixed(took.last, 0)} min after the platform could reach n8n again; ${after.all} recovery requests over the ${fixed(afterMs / HOUR, 2)} h simulated after it; of the ${missed.size - reach.length} beyond reach, ${beyond} ran`,
				],
			},
		];
	} finally {
		clocks.restore();
		await w.close();
	}
}

function metricOf(line: Line): Metric {
	const day = (n: number) => fixed(n / line.days, n / line.days < 10 ? 1 : 0);
	const total = line.log + line.redispatch + line.relay;
	return metric(
		line.scenario,
		total / line.days,
		`${day(line.log)} log + ${day(line.redispatch)} redispatch + ${day(line.relay)} relay = ${day(total)} requests/day over ${fixed(line.days * 24, 2)} h; ran ${line.executions} of ${line.completions}, lost ${line.lost}, duplicates ${line.duplicates}`,
		{ text: line.target, pass: line.met },
	);
}

/** The row's own table: one line a scenario, every column. */
function tableOf(lines: Line[]): string[] {
	const day = (line: Line, n: number) => fixed(n / line.days, 1);
	return [
		'| scenario | completions/day | days simulated | log req./day | redispatches/day | relay questions/day | total req./day | executions / completions | lost | duplicates | target | met? |',
		'|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|',
		...lines.map(
			(l) =>
				`| ${l.scenario} | ${l.perDay.toLocaleString('en')} | ${fixed(l.days, 3)} | ${day(l, l.log)} | ${day(l, l.redispatch)} | ${day(l, l.relay)} | ${day(l, l.log + l.redispatch + l.relay)} | ${l.executions} / ${l.completions} | ${l.lost} | ${l.duplicates} | ${l.target} | ${l.met ? 'yes' : 'no'} |`,
		),
	];
}

export async function run(options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const { sizes: size, env } = sizes(options.quick);
	const mode =
		'in-process (the trigger through n8n-core contexts behind an https server of the bench; sandbox API in its own process; moved clocks)';
	const lines: Line[] = [];
	try {
		const scenarios: Array<[number, () => Promise<Line[]>]> = [
			[1, async () => [await nothingFailing(1_000, size.steadyDays * 24)]],
			[2, async () => [await nothingFailing(10_000, size.busyHours)]],
			[3, async () => [await outage(1_000, size.outageHours)]],
			[4, async () => await unreachable(300, size.unreachableDays)],
		];
		for (const [number, scenario] of scenarios) {
			if (!size.scenarios.includes(number)) continue;
			const started = Date.now();
			progress(`recovery-cost: scenario ${number} ...`);
			const measured = await scenario();
			lines.push(...measured);
			progress(
				`recovery-cost: scenario ${number} done in ${fixed((Date.now() - started) / 1000, 0)} s`,
			);
		}
		for (const line of tableOf(lines)) progress(line);
		return {
			id: ID,
			title: TITLE,
			mode,
			settings: {
				...size,
				sandbox: 'defaults (every reading at its default), 1 delivery attempt, 30 s time-out',
				rateLimitPerMinute: 100_000,
				lines,
			},
			metrics: lines.map(metricOf),
			notes: [
				...lines.flatMap((line) => line.notes.map((note) => `${line.scenario}: ${note}`)),
				`per day = counted ÷ days simulated (scenario 2 simulates ${size.busyHours} h and scales)`,
				...(Object.keys(env).length ? [`sizes set: ${envListed(env)}`] : []),
				...(options.quick ? ['--quick: smaller sizes (see settings)'] : []),
				...tableOf(lines),
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: ID, title: TITLE, mode }, t0, error);
	}
}
