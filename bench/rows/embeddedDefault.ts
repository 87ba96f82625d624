/**
 * Row 4d, the embedded default (issue 50): ONE n8n 2.40.7 process on SQLite (n8n's default
 * database and execution mode, no queue, no PostgreSQL or Redis) at n8n's default settings, the
 * Learning Platform Trigger beside n8n's bare Webhook node and the hand-built chain, with the
 * deliveries and faults of rows 4b/4c (bench/lib/receivers.ts: the same subscriptions, bodies,
 * closed loop through the sandbox's control API, dropped answers, counting). Most self-hosted
 * n8n runs like this.
 *
 * Per receiver: deliveries/s sustained (first send → last execution finished) and answered (first
 * send → last answer), lost, duplicates, p50/p99 delivery → execution start, CPU per delivery of
 * the n8n process (and of its children: the task runner), bytes the n8n process wrote to disk per
 * delivery (/proc/<pid>/io `write_bytes`: the SQLite file and its WAL, and any other file n8n
 * writes; the growth of those other files is given apart), the trigger's static data (each save
 * writes the whole field). Then, where `LP_BENCH_EMBEDDED_TRIGGERS` > 1, the same number of
 * trigger workflows on the instance, each its own API user subscribed to `Completion_created`
 * (one event, one delivery to each): bytes per delivery with 5 triggers against 1 (issue 50,
 * item 3).
 *
 * Size: LP_BENCH_EMBEDDED_EVENTS (events per phase, default 500 as in 4b/4c), _PHASES (per
 * receiver, default 2), _WARM_UP (deliveries per receiver before the phases, default 100),
 * _TRIGGERS (trigger workflows in the last part, default 5; 1 skips it), _TRIGGER_FILL (deliveries
 * to the trigger after the warm-up, not counted, default 0; 5,000 fill its ledger). Settings:
 * LP_BENCH_EMBEDDED_SETTINGS=n8n (default: n8n's own, the database ping time-out included) or
 * `recommended` (RECOMMENDED_WEBHOOK_PROCESS_ENV, on the one process); LP_BENCH_EMBEDDED_ENV
 * (JSON) adds settings.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { SandboxClient } from '../../sandbox/client';
import { N8N_VERSION } from '../../scripts/n8n/paths';
import { RECOMMENDED_WEBHOOK_PROCESS_ENV } from '../../scripts/n8n/queue';
import { startStack, type Stack } from '../../scripts/n8n/stack';
import type { RowOptions } from '../run';
import {
	envListed,
	failedResult,
	fixed,
	metric,
	progress,
	seconds,
	sizeFromEnv,
	sleep,
	type Metric,
	type RowResult,
} from '../lib/common';
import {
	allPids,
	deliveryFigures,
	EVENT_OF,
	fireEvents,
	peakRssMiB,
	procStat,
	RECEIVER_NAMES,
	RECEIVERS,
	SEQ_OF_EXECUTION,
	SEQ_RECEIVED,
	setUpReceivers,
	triggerWorkflow,
	type DeliveryFigures,
	type PhaseTimes,
	type Receiver,
} from '../lib/receivers';

const EVENTS = sizeFromEnv('LP_BENCH_EMBEDDED_EVENTS', 500, 10);
const PHASES = sizeFromEnv('LP_BENCH_EMBEDDED_PHASES', 2, 1);
const WARM_UP = sizeFromEnv('LP_BENCH_EMBEDDED_WARM_UP', 100, 0);
const TRIGGERS = sizeFromEnv('LP_BENCH_EMBEDDED_TRIGGERS', 5, 1);
/** deliveries to the trigger after the warm-up, not counted: 5,000 fill its ledger to the cap */
const TRIGGER_FILL = sizeFromEnv('LP_BENCH_EMBEDDED_TRIGGER_FILL', 0, 0);
const IN_FLIGHT = 16;
/** the sandbox drops n8n's answer to every DROP_EVERY-th first attempt: the platform retries it */
const DROP_EVERY = 5;

const embeddedSettings = (process.env.LP_BENCH_EMBEDDED_SETTINGS || 'n8n') as 'n8n' | 'recommended';
if (embeddedSettings !== 'n8n' && embeddedSettings !== 'recommended')
	throw new Error(
		`LP_BENCH_EMBEDDED_SETTINGS must be 'n8n' or 'recommended', not '${embeddedSettings}'`,
	);
const extraEnv: Record<string, string> = JSON.parse(process.env.LP_BENCH_EMBEDDED_ENV || '{}');
/**
 * The one process's settings. The harness gives every n8n process DB_PING_TIMEOUT_MS=30000
 * (scripts/n8n/n8n.ts); this row puts n8n's default (5000) back, so that what a default install
 * meets on a busy host (503 "Database is not ready!") is counted here too.
 */
const n8nEnv: Record<string, string> = {
	DB_PING_TIMEOUT_MS: '5000',
	...(embeddedSettings === 'recommended' ? RECOMMENDED_WEBHOOK_PROCESS_ENV : {}),
	...extraEnv,
};

/** The parts whose CPU time is counted: the n8n process, and its children (the task runner). */
const CPU_GROUPS = ['n8n process', 'its children'] as const;
type CpuGroup = (typeof CPU_GROUPS)[number];

function cpuNow(n8nPid: number): Record<CpuGroup, number> {
	const all = allPids().map((pid) => ({ pid, stat: procStat(pid) }));
	const descendants = new Set<number>();
	for (let grew = true; grew; ) {
		grew = false;
		for (const { pid, stat } of all)
			if (stat && !descendants.has(pid) && (stat.ppid === n8nPid || descendants.has(stat.ppid))) {
				descendants.add(pid);
				grew = true;
			}
	}
	return {
		'n8n process': procStat(n8nPid)?.cpuMs ?? NaN,
		'its children': all
			.filter(({ pid }) => descendants.has(pid))
			.reduce((sum, { stat }) => sum + (stat?.cpuMs ?? 0), 0),
	};
}

/** `write_bytes` of /proc/<pid>/io: bytes the process caused to be written to storage (page cache pages it dirtied, every thread), less `cancelled_write_bytes`. */
function writtenBytes(pid: number): number {
	try {
		const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
		const field = (name: string) => Number(io.match(new RegExp(`^${name}: (\\d+)`, 'm'))?.[1]);
		return field('write_bytes') - field('cancelled_write_bytes');
	} catch {
		return NaN;
	}
}

/** Sizes (bytes) of the SQLite file with its WAL, and of every other file n8n keeps in its folder (not the installed packages). */
function folderBytes(dataFolder: string): { database: number; other: number } {
	let database = 0;
	let other = 0;
	const walk = (dir: string, top: boolean) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) {
				if (!(top && entry.name === 'nodes')) walk(full, false);
			} else if (entry.isFile()) {
				const size = fs.statSync(full).size;
				if (top && /^database\.sqlite(-wal)?$/.test(entry.name)) database += size;
				else if (!(top && entry.name === 'database.sqlite-shm')) other += size;
			}
		}
	};
	try {
		walk(dataFolder, true);
	} catch {
		return { database: NaN, other: NaN };
	}
	return { database, other };
}

/** One query against n8n's SQLite database, read-only, with the sqlite3 shell (Debian's `sqlite3`). */
function sql(databaseFile: string, statement: string): string {
	return execFileSync('sqlite3', ['-readonly', '-cmd', '.timeout 10000', databaseFile, statement], {
		encoding: 'utf8',
	}).trim();
}
const sqlNumber = (databaseFile: string, statement: string) =>
	Number(sql(databaseFile, statement) || 'NaN');
/** n8n keeps times in SQLite as 'YYYY-MM-DD HH:MM:SS.SSS' (UTC): ms since the epoch. */
const epochMs = (column: string) => `(julianday(${column}) - 2440587.5) * 86400000.0`;

interface Phase extends PhaseTimes {
	index: number;
	cpuMs: Record<CpuGroup, number>;
	/** /proc/<pid>/io write_bytes of the n8n process over the phase */
	writtenBytes: number;
	/** growth of the SQLite file + WAL, and of n8n's other files, over the phase */
	databaseGrowth: number;
	otherGrowth: number;
	/** deliveries of the phase (events × subscriptions) */
	deliveries: number;
}

interface Context {
	stack: Stack;
	control: SandboxClient;
	databaseFile: string;
	n8nPid: number;
}

/**
 * Fires one phase's events, waits for their answers and for n8n to finish the executions they
 * started (every workflow in `workflowIds`), and counts CPU and bytes over that span.
 */
async function runPhase(
	context: Context,
	options: {
		receiver: Receiver;
		index: number;
		subscriptionIds: number[];
		workflowIds: string[];
		firstSeq: number;
		count: number;
		label?: string;
	},
): Promise<Phase> {
	const { databaseFile, n8nPid } = context;
	const afterId = sqlNumber(databaseFile, 'select coalesce(max(id), 0) from execution_entity');
	const cpuAtStart = cpuNow(n8nPid);
	const writtenAtStart = writtenBytes(n8nPid);
	const filesAtStart = folderBytes(context.stack.host.dataFolder);
	const fired = await fireEvents(context.control, {
		event: EVENT_OF[options.receiver],
		phase: options.index,
		firstSeq: options.firstSeq,
		count: options.count,
		inFlight: IN_FLIGHT,
		subscriptionIds: options.subscriptionIds,
	});
	const where = `"workflowId" in (${options.workflowIds.map((id) => `'${id}'`).join(', ')}) and id > ${afterId}`;
	const deadline = Date.now() + 600_000;
	while (
		Date.now() < deadline &&
		sqlNumber(
			databaseFile,
			`select count(*) from execution_entity where ${where} and status in ('new', 'running', 'waiting')`,
		) > 0
	)
		await sleep(250);
	const lastStopped = sqlNumber(
		databaseFile,
		`select coalesce(${epochMs('max("stoppedAt")')}, 0) from execution_entity where ${where}`,
	);
	const processedMs = Math.max(lastStopped - fired.firstSend, fired.answeredMs);
	const cpuAtEnd = cpuNow(n8nPid);
	const filesAtEnd = folderBytes(context.stack.host.dataFolder);
	const deliveries = fired.seqs.length * options.subscriptionIds.length;
	progress(
		`embedded-default: phase ${options.index} (${options.label ?? RECEIVER_NAMES[options.receiver]}): ${deliveries} deliveries, ${fired.attempts.length} attempts, answered in ${seconds(fired.answeredMs)}, executions finished after ${seconds(processedMs)}`,
	);
	return {
		receiver: options.receiver,
		index: options.index,
		seqs: fired.seqs,
		attempts: fired.attempts,
		answeredMs: fired.answeredMs,
		processedMs,
		cpuMs: Object.fromEntries(
			CPU_GROUPS.map((group) => [group, cpuAtEnd[group] - cpuAtStart[group]]),
		) as Record<CpuGroup, number>,
		writtenBytes: writtenBytes(n8nPid) - writtenAtStart,
		databaseGrowth: filesAtEnd.database - filesAtStart.database,
		otherGrowth: filesAtEnd.other - filesAtStart.other,
		deliveries,
	};
}

interface ReceiverFigures extends DeliveryFigures {
	cpuMsPerDelivery: Record<CpuGroup, number>;
	writtenBytesPerDelivery: number;
	databaseGrowthPerDelivery: number;
	otherGrowthPerDelivery: number;
}

function perDelivery(phases: Phase[]) {
	const deliveries = phases.reduce((sum, p) => sum + p.deliveries, 0);
	const total = (f: (p: Phase) => number) => phases.reduce((sum, p) => sum + f(p), 0);
	return {
		cpuMsPerDelivery: Object.fromEntries(
			CPU_GROUPS.map((group) => [group, total((p) => p.cpuMs[group]) / deliveries]),
		) as Record<CpuGroup, number>,
		writtenBytesPerDelivery: total((p) => p.writtenBytes) / deliveries,
		databaseGrowthPerDelivery: total((p) => p.databaseGrowth) / deliveries,
		otherGrowthPerDelivery: total((p) => p.otherGrowth) / deliveries,
	};
}

export async function run(_options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Embedded default: ${EVENTS * PHASES} deliveries each into one n8n process on SQLite, beside n8n's Webhook node and the hand-built chain`;
	const mode = `real n8n ${N8N_VERSION}, one process (regular execution mode), SQLite, ${embeddedSettings === 'n8n' ? "n8n's default settings" : 'the recommended settings'}, behind the TLS front`;
	let stack: Stack | undefined;
	const loads: number[] = [];
	const sampler = setInterval(() => loads.push(os.loadavg()[0]), 5_000);
	const loadAtStart = os.loadavg()[0];
	try {
		try {
			execFileSync('sqlite3', ['-version'], { stdio: 'ignore' });
		} catch {
			throw new Error(
				"row 4d reads n8n's SQLite database with the sqlite3 shell: apt-get install sqlite3",
			);
		}
		stack = await startStack({
			name: 'bench-embedded',
			sandbox: true,
			sandboxArgs: ['--quiet'],
			n8nEnv,
		});
		const { client } = stack;
		const control = stack.sandbox!.control;
		await control.setConfig({ rateLimitPerMinute: 10_000 });
		const databaseFile = path.join(stack.host.dataFolder, 'database.sqlite');
		const n8nPid = stack.main.proc!.pid;
		const context: Context = { stack, control, databaseFile, n8nPid };

		const { workflowOf, subscriptionOf, extraTriggerCredentials } = await setUpReceivers(
			stack,
			control,
			{ label: 'embedded', extraTriggers: TRIGGERS - 1 },
		);
		progress(`embedded-default: subscriptions ${JSON.stringify(subscriptionOf)}`);
		await control.dropDeliveryAnswers({ every: DROP_EVERY, pathPattern: '^/webhook/' });

		// A warm-up of every path (code compiled and loaded), not counted.
		let warmSeq = 800_000;
		if (WARM_UP > 0)
			for (const receiver of RECEIVERS) {
				await runPhase(context, {
					receiver,
					index: -1,
					subscriptionIds: [subscriptionOf[receiver]],
					workflowIds: [workflowOf[receiver]],
					firstSeq: warmSeq,
					count: WARM_UP,
				});
				warmSeq += WARM_UP;
			}

		if (TRIGGER_FILL > 0)
			await runPhase(context, {
				receiver: 'trigger',
				index: -2,
				subscriptionIds: [subscriptionOf.trigger],
				workflowIds: [workflowOf.trigger],
				firstSeq: 900_000,
				count: TRIGGER_FILL,
				label: 'trigger, filling its ledger',
			});

		const staticDataBytes = (workflowId: string) =>
			sqlNumber(
				databaseFile,
				`select coalesce(length(cast("staticData" as blob)), 0) from workflow_entity where id = '${workflowId}'`,
			);
		const staticDataAfterPhase: number[] = [];
		const phases: Phase[] = [];
		const loadBefore = os.loadavg()[0];
		for (let i = 0; i < PHASES * RECEIVERS.length; i++) {
			const receiver = RECEIVERS[i % RECEIVERS.length];
			phases.push(
				await runPhase(context, {
					receiver,
					index: i,
					subscriptionIds: [subscriptionOf[receiver]],
					workflowIds: [workflowOf[receiver]],
					firstSeq: i * EVENTS,
					count: EVENTS,
				}),
			);
			if (receiver === 'trigger') staticDataAfterPhase.push(staticDataBytes(workflowOf.trigger));
		}
		const loadAfter = os.loadavg()[0];

		// Issue 50, item 3: the same instance with TRIGGERS trigger workflows, each subscribed (its
		// own API user) to the trigger's event: one event, one delivery to each.
		let many: { phase: Phase; figures: DeliveryFigures; staticData: number[] } | undefined;
		if (TRIGGERS > 1) {
			const extraWorkflows: string[] = [];
			for (const [i, credential] of extraTriggerCredentials.entries())
				extraWorkflows.push(
					await triggerWorkflow(
						client,
						`bench: trigger ${i + 2} of ${TRIGGERS}`,
						credential,
						EVENT_OF.trigger,
					),
				);
			const subscriptions = (await control.subscriptions()).filter(
				(s) => s.deleted_at === null && s.event === EVENT_OF.trigger,
			);
			if (subscriptions.length !== TRIGGERS)
				throw new Error(
					`${subscriptions.length} live subscriptions to ${EVENT_OF.trigger}, expected ${TRIGGERS}`,
				);
			const workflowIds = [workflowOf.trigger, ...extraWorkflows];
			const firstSeq = PHASES * RECEIVERS.length * EVENTS;
			const count = Math.max(1, Math.round(EVENTS / TRIGGERS));
			const phase = await runPhase(context, {
				receiver: 'trigger',
				index: PHASES * RECEIVERS.length,
				subscriptionIds: subscriptions.map((s) => s.id),
				workflowIds,
				firstSeq,
				count,
				label: `${TRIGGERS} trigger workflows`,
			});
			const inPhase = (seq: number) => seq >= firstSeq && seq < firstSeq + count;
			// lost and duplicates per workflow (each got every event), summed
			const executionsEach = await Promise.all(
				workflowIds.map(async (workflowId) =>
					(await client.listExecutions({ workflowId, includeData: true })).filter((e) =>
						inPhase(SEQ_OF_EXECUTION.trigger(e)),
					),
				),
			);
			const figuresEach = executionsEach.map((executions) =>
				deliveryFigures([phase], executions, SEQ_OF_EXECUTION.trigger),
			);
			const all = deliveryFigures([phase], executionsEach.flat(), SEQ_OF_EXECUTION.trigger);
			many = {
				phase,
				figures: {
					...all,
					deliveries: phase.deliveries,
					rate: phase.deliveries / (phase.processedMs / 1000),
					phaseRates: [phase.deliveries / (phase.processedMs / 1000)],
					answerRate: phase.deliveries / (phase.answeredMs / 1000),
					lost: figuresEach.reduce((sum, f) => sum + f.lost, 0),
					duplicates: figuresEach.reduce((sum, f) => sum + f.duplicates, 0),
				},
				staticData: workflowIds.map(staticDataBytes),
			};
		}

		const workflowDataBytes = Object.fromEntries(
			RECEIVERS.map((receiver) => [
				receiver,
				sqlNumber(
					databaseFile,
					`select coalesce(avg(length(cast(d."workflowData" as blob))), 0) from execution_data d join execution_entity e on e.id = d."executionId" where e."workflowId" = '${workflowOf[receiver]}'`,
				),
			]),
		) as Record<Receiver, number>;
		const staticDataAtEnd = staticDataBytes(workflowOf.trigger);
		const redispatches = (
			await control.deliveries({ subscriptionId: subscriptionOf.trigger })
		).filter((a) => a.delivery_id !== '' && a.attempt === 1).length;

		progress('embedded-default: reading the executions ...');
		const inPhases = (seq: number) => seq >= 0 && seq < PHASES * RECEIVERS.length * EVENTS;
		const measured = {} as Record<Receiver, ReceiverFigures>;
		for (const receiver of RECEIVERS) {
			const all = await client.listExecutions({
				workflowId: workflowOf[receiver],
				includeData: true,
			});
			const ofReceiver = phases.filter((p) => p.receiver === receiver);
			measured[receiver] = {
				...deliveryFigures(
					ofReceiver,
					all.filter((e) => inPhases(SEQ_RECEIVED[receiver](e))),
					SEQ_OF_EXECUTION[receiver],
				),
				...perDelivery(ofReceiver),
			};
		}
		const { trigger: t, webhook: w, chain: c } = measured;
		const clean = t.lost === 0 && t.duplicates === 0;
		const ratio = {
			chain: t.rate / c.rate,
			webhook: t.rate / w.rate,
			chainAnswered: t.answerRate / c.answerRate,
			webhookAnswered: t.answerRate / w.answerRate,
			bytes: t.writtenBytesPerDelivery / w.writtenBytesPerDelivery,
		};
		clearInterval(sampler);
		loads.push(os.loadavg()[0]);

		const each = (name: string, f: (x: ReceiverFigures) => string) =>
			metric(
				`${name}: trigger / Webhook node / chain`,
				null,
				RECEIVERS.map((r) => f(measured[r])).join(' / '),
			);
		const rateText = (x: DeliveryFigures) =>
			`${fixed(x.rate, 1)} (phases ${x.phaseRates.map((r) => fixed(r, 1)).join(', ')})`;
		const ratioMetric = (name: string, value: number, target: number) =>
			metric(name, value, fixed(value, 2), {
				text: `≥ ${fixed(target, 1)}`,
				pass: clean && value >= target,
			});
		const metrics: Metric[] = [
			metric(
				'trigger deliveries/s with 0 lost and 0 duplicates',
				clean ? t.rate : null,
				clean
					? rateText(t)
					: `not sustained: ${fixed(t.rate, 1)}/s with ${t.lost} lost, ${t.duplicates} duplicates`,
				{ text: '0 lost, 0 duplicates', pass: clean },
			),
			metric("n8n's Webhook node deliveries/s", w.rate, rateText(w)),
			metric('hand-built chain deliveries/s', c.rate, rateText(c)),
			ratioMetric('ratio trigger ÷ hand-built chain (deliveries/s)', ratio.chain, 1.0),
			ratioMetric('ratio trigger ÷ Webhook node (deliveries/s)', ratio.webhook, 0.9),
			each('answered deliveries/s (first send → last answer)', (x) => fixed(x.answerRate, 1)),
			ratioMetric('ratio trigger ÷ hand-built chain (answered/s)', ratio.chainAnswered, 1.0),
			ratioMetric('ratio trigger ÷ Webhook node (answered/s)', ratio.webhookAnswered, 0.9),
			each('lost', (x) => String(x.lost)),
			each('duplicates', (x) => String(x.duplicates)),
			each('executions started', (x) => String(x.executions)),
			each('delivery → execution start p50 / p99', (x) => `${x.p50} ms, ${x.p99} ms`),
			each(
				'retries / answers dropped / time-outs / not accepted',
				(x) => `${x.retries}, ${x.dropped}, ${x.timeouts}, ${x.notAccepted}`,
			),
			each('failed executions', (x) => String(x.failed)),
			...CPU_GROUPS.map((group) =>
				each(`CPU ms per delivery, ${group}`, (x) => fixed(x.cpuMsPerDelivery[group], 1)),
			),
			each('bytes written to disk per delivery by n8n (/proc io write_bytes)', (x) =>
				fixed(x.writtenBytesPerDelivery, 0),
			),
			each("of which n8n's other files (binary data, event log), growth per delivery", (x) =>
				fixed(x.otherGrowthPerDelivery, 0),
			),
			each('SQLite file + WAL, size growth per delivery', (x) =>
				fixed(x.databaseGrowthPerDelivery, 0),
			),
			metric(
				'ratio trigger ÷ Webhook node (bytes written per delivery), 1 trigger workflow',
				ratio.bytes,
				fixed(ratio.bytes, 2),
				{ text: '≤ 1.2', pass: ratio.bytes <= 1.2 },
			),
			...(many
				? [
						(() => {
							const bytes =
								many.phase.writtenBytes / many.phase.deliveries / w.writtenBytesPerDelivery;
							return metric(
								`ratio trigger ÷ Webhook node (bytes written per delivery), ${TRIGGERS} trigger workflows`,
								bytes,
								`${fixed(bytes, 2)} (${fixed(many.phase.writtenBytes / many.phase.deliveries, 0)} bytes per delivery)`,
								{ text: '≤ 1.2', pass: bytes <= 1.2 },
							);
						})(),
						metric(
							`${TRIGGERS} trigger workflows: deliveries/s sustained / answered, lost, duplicates, p50 / p99`,
							many.figures.rate,
							`${fixed(many.figures.rate, 1)} / ${fixed(many.figures.answerRate, 1)}, ${many.figures.lost}, ${many.figures.duplicates}, ${many.figures.p50} ms / ${many.figures.p99} ms`,
						),
						metric(
							`${TRIGGERS} trigger workflows: CPU ms per delivery (n8n process), other files' growth per delivery`,
							many.phase.cpuMs['n8n process'] / many.phase.deliveries,
							`${fixed(many.phase.cpuMs['n8n process'] / many.phase.deliveries, 1)} ms, ${fixed(many.phase.otherGrowth / many.phase.deliveries, 0)} bytes`,
						),
					]
				: []),
			metric(
				"the trigger's static data (bytes; each save writes the whole field): after each trigger phase",
				staticDataAtEnd,
				staticDataAfterPhase.join(', '),
			),
			...(many
				? [
						metric(
							`the ${TRIGGERS} trigger workflows' static data at the end (bytes)`,
							Math.max(...many.staticData),
							many.staticData.join(', '),
						),
					]
				: []),
			metric(
				'bytes of the workflow stored with each execution (execution_data.workflowData): trigger / Webhook node / chain',
				null,
				RECEIVERS.map((r) => fixed(workflowDataBytes[r], 0)).join(' / '),
			),
			metric(
				"redispatches asked for by the trigger's recovery",
				redispatches,
				String(redispatches),
			),
			metric('peak RSS of the n8n process (MiB)', peakRssMiB(n8nPid), fixed(peakRssMiB(n8nPid), 0)),
			metric(
				'load average (1 min): start, during (mean / max), end',
				Math.max(...loads),
				`${fixed(loadAtStart, 2)}, ${fixed(loads.reduce((a, b) => a + b, 0) / loads.length, 2)} / ${fixed(Math.max(...loads), 2)}, ${fixed(os.loadavg()[0], 2)}`,
			),
		];
		return {
			id: 'embedded-default',
			title,
			mode,
			settings: {
				eventsPerPhase: EVENTS,
				phasesPerReceiver: PHASES,
				warmUpPerReceiver: WARM_UP,
				triggerFill: TRIGGER_FILL,
				triggerWorkflows: TRIGGERS,
				inFlight: IN_FLIGHT,
				dropEvery: DROP_EVERY,
				executionsMode: 'regular',
				database: 'sqlite',
				triggerTypeVersion: 2,
				chainWorkflow: 'bench/workflows/hand-built-chain.json',
				delivery:
					'sandbox defaults: concurrent, 5 s time-out, 3 attempts, back-off 200 ms doubling; every 5th first answer dropped',
				embeddedSettings,
				n8nEnv,
			},
			metrics,
			notes: [
				`n8n settings: ${embeddedSettings === 'n8n' ? "n8n's defaults" : 'recommended'} (${envListed(n8nEnv)}; the harness's other settings, scripts/n8n/n8n.ts, touch nothing on the webhook path: N8N_PROXY_HOPS=1 for the front, diagnostics and banners off, executions saved as n8n's defaults do)`,
				`phases rotate trigger, Webhook node, chain (${PHASES} each, ${EVENTS} events each) after a warm-up of ${WARM_UP} deliveries each${TRIGGER_FILL > 0 ? ` and ${TRIGGER_FILL} more to the trigger (its ledger filled, not counted)` : ''}, fired through the sandbox control API with at most ${IN_FLIGHT} deliveries pending; the sandbox drops n8n's answer to every ${DROP_EVERY}th first attempt, so the platform retries it`,
				"deliveries/s: a receiver's deliveries ÷ its phases' time from first send to the last execution finished (n8n's stored stoppedAt); each phase waits for its executions before the next starts, and its CPU and bytes are counted over the same span",
				"bytes written: /proc/<pid>/io write_bytes − cancelled_write_bytes of the n8n process (every thread): page-cache pages it dirtied in the SQLite file, its WAL and any other file, counted once per page until written back; the growth of n8n's other files (binary data: the chain's Raw Body; n8n's event log) is given apart; the SQLite file + WAL size growth is a floor (the WAL is reused after each checkpoint)",
				...(many
					? [
							`${TRIGGERS} trigger workflows: after the phases above, ${TRIGGERS - 1} more trigger workflows (each its own API user) subscribed to ${EVENT_OF.trigger}; ${many.phase.seqs.length} events, one delivery to each workflow (${many.phase.deliveries} deliveries), with the same dropped answers`,
						]
					: []),
				`load average (1 min) before the phases ${fixed(loadBefore, 2)}, after ${fixed(loadAfter, 2)}; samples every 5 s: ${loads.map((l) => fixed(l, 1)).join(' ')}`,
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'embedded-default', title, mode }, t0, error);
	} finally {
		clearInterval(sampler);
		await stack?.stop().catch(() => undefined);
	}
}
