/**
 * Row 4b, the webhook trigger at scale: queue mode with dedicated webhook processes (a real n8n
 * 2.40.7: PostgreSQL, Redis, main, 2 workers, 2 `n8n webhook` processes behind the TLS front's
 * round-robin; scripts/n8n/queue.ts), the Learning Platform Trigger side by side with n8n's own
 * Webhook node.
 *
 * Two workflows, each "receiver → No-Op", both active:
 * - T: Learning Platform Trigger on `Completion_created` (its activation subscribes API user A);
 * - W: n8n's Webhook node (POST, answers when received, like the trigger); the bench subscribes
 *   API user B, with a signing key and a token too, to `Completion_updated` at W's URL.
 * The sandbox delivers both (same sender, same front, same processes). Bodies are the same but for
 * the event name: `{event, payload: {bench_phase, bench_seq, completion}, now, delivery_id,
 * api_version}`. Phases alternate T, W, T, W... (PHASES per receiver, EVENTS each): the bench fires
 * events through the control API, keeping at most IN_FLIGHT deliveries pending (a closed loop), and
 * waits for each phase's deliveries to be answered before the next.
 *
 * - deliveries/s of a phase: its deliveries ÷ (last answer − first send), from the sandbox's
 *   attempt rows (`sent_at` with milliseconds + `response_time_ms`); a receiver's rate: all its
 *   deliveries ÷ the sum of its phases' times; ratio T ÷ W (target ≥ 0.9);
 * - lost (no execution) and duplicates (executions beyond one per event), from n8n's stored
 *   executions (the trigger's output, or the Webhook node's body), per receiver (target 0, 0);
 * - p50 / p99 from delivery (the sandbox's send time of the first attempt) to execution start (n8n's
 *   stored `startedAt`);
 * - load average (1 min) sampled every 5 s during the row, and retries and time-outs seen.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';

import { request } from 'undici';

import type { DeliveryAttempt, SandboxClient } from '../../sandbox/client';
import { nodeOutput, type ExecutionSummary, type N8nClient } from '../../scripts/n8n/client';
import { startQueueStack, type QueueStack } from '../../scripts/n8n/queue';
import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import type { RowOptions } from '../run';
import {
	failedResult,
	fixed,
	metric,
	percentile,
	progress,
	seconds,
	sleep,
	type Metric,
	type RowResult,
} from '../lib/common';
import { N8N_VERSION } from '../../scripts/n8n/paths';
import { benchCompletionPayload } from '../lib/payload';

const EVENTS = 500;
const PHASES = 2;
const IN_FLIGHT = 16;
/** deliveries per receiver before the measured phases (not counted) */
const WARM_UP = 100;
const TRIGGER_EVENT = 'Events\\Courses\\Completion_created';
const WEBHOOK_EVENT = 'Events\\Courses\\Completion_updated';
const TRIGGER_NODE = 'Trigger';
const WEBHOOK_NODE = 'Webhook';

type Receiver = 'trigger' | 'webhook';

interface Phase {
	receiver: Receiver;
	index: number;
	seqs: number[];
	/** the attempts of this phase's deliveries */
	attempts: DeliveryAttempt[];
	ms: number;
	/** CPU time (user + system, all threads) of each part of the stack during the phase */
	cpuMs: Record<CpuGroup, number>;
}

function payload(phase: number, seq: number) {
	return benchCompletionPayload(seq, 700_000, { bench_phase: phase });
}

const seqOf = (body: string): number =>
	Number((JSON.parse(body) as { payload?: { bench_seq?: number } }).payload?.bench_seq);
const sentAt = (a: DeliveryAttempt) => Date.parse(a.sent_at);
const answeredAt = (a: DeliveryAttempt) => sentAt(a) + (a.response_time_ms ?? 0);
const ok = (a: DeliveryAttempt) =>
	a.status_code !== null && a.status_code >= 200 && a.status_code < 300;

/** utime + stime in ms (every thread: isolated-vm's too) and the parent pid, from /proc/<pid>/stat. */
function procStat(pid: number): { cpuMs: number; ppid: number } | undefined {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		// after the name: state, ppid, ..., utime and stime (ticks of 10 ms) as the 12th and 13th
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, ppid: Number(fields[1]) };
	} catch {
		return undefined;
	}
}

/** The parts of the stack whose CPU time is counted per phase. */
const CPU_GROUPS = ['webhook processes', 'workers', 'main', 'PostgreSQL', 'Redis'] as const;
type CpuGroup = (typeof CPU_GROUPS)[number];

/**
 * CPU time (ms) of each part of the stack now. PostgreSQL: the postmaster and its children (one
 * backend per pooled connection, which live as long as the pools). NaN without /proc.
 */
function cpuNow(stack: QueueStack): Record<CpuGroup, number> {
	const sum = (pids: number[]) =>
		pids.reduce((total, pid) => total + (procStat(pid)?.cpuMs ?? NaN), 0);
	let all: number[] = [];
	try {
		all = fs
			.readdirSync('/proc')
			.filter((name) => /^\d+$/.test(name))
			.map(Number);
	} catch {
		/* no /proc */
	}
	const postmaster = stack.postgres.process.pid;
	const postgres = [postmaster, ...all.filter((pid) => procStat(pid)?.ppid === postmaster)];
	return {
		'webhook processes': sum(stack.webhookProcesses.map((p) => p.proc!.pid)),
		workers: sum(stack.workers.map((p) => p.proc!.pid)),
		main: sum([stack.main.proc!.pid]),
		PostgreSQL: postgres.reduce((total, pid) => total + (procStat(pid)?.cpuMs ?? 0), 0),
		Redis: sum([stack.redis.process.pid]),
	};
}

/** Peak resident memory (VmHWM) of a process in MiB, from /proc/<pid>/status; NaN without it. */
function peakRssMiB(pid: number): number {
	try {
		const match = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
		return match ? Number(match[1]) / 1024 : NaN;
	} catch {
		return NaN;
	}
}

/** API user B's own subscription (the bench exchanges its refresh token; n8n never sees it). */
async function subscribe(
	stack: QueueStack,
	control: SandboxClient,
	url: string,
): Promise<{ username: string; id: number }> {
	const sandbox = stack.sandbox!;
	const grant = await control.issueRefreshToken(`bench-scale-webhook-${process.pid}`);
	const headers = { 'user-agent': 'lp-bench/1.0', accept: 'application/json' };
	const tenancy = encodeURIComponent(sandbox.tenancyId);
	const exchange = await request(
		`${sandbox.url}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${tenancy}/apikeys?username=${encodeURIComponent(grant.username)}`,
		{ headers: { ...headers, authorization: `Bearer ${grant.refresh_token}` } },
	);
	const { api_key: apiKey } = (await exchange.body.json()) as { api_key: string };
	const created = await request(`${sandbox.url}/api/v2/${tenancy}/webhooks`, {
		method: 'POST',
		headers: {
			...headers,
			authorization: `Bearer ${apiKey}`,
			'content-type': 'application/json',
		},
		body: JSON.stringify({
			event: WEBHOOK_EVENT,
			url,
			signing_key: randomUUID(),
			auth_token: randomUUID(),
		}),
	});
	const subscription = (await created.body.json()) as { id?: number };
	if (created.statusCode !== 201 || subscription.id === undefined)
		throw new Error(`creating the Webhook node's subscription: ${created.statusCode}`);
	return { username: grant.username, id: subscription.id };
}

async function workflow(
	client: N8nClient,
	name: string,
	receiver: Record<string, unknown>,
): Promise<string> {
	const { id } = await client.createWorkflow({
		name,
		nodes: [
			{ ...receiver, id: randomUUID(), position: [0, 0] },
			{
				id: randomUUID(),
				name: 'Done',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [220, 0],
				parameters: {},
			},
		],
		connections: {
			[String(receiver.name)]: { main: [[{ node: 'Done', type: 'main', index: 0 }]] },
		},
	});
	await client.activate(id);
	return id;
}

/** Fires one phase's events with at most IN_FLIGHT deliveries pending; waits for their answers. */
async function runPhase(
	control: SandboxClient,
	receiver: Receiver,
	index: number,
	subscriptionId: number,
	firstSeq: number,
	stack: QueueStack,
	count = EVENTS,
): Promise<Phase> {
	const cpuAtStart = cpuNow(stack);
	const event = receiver === 'trigger' ? TRIGGER_EVENT : WEBHOOK_EVENT;
	const seqs: number[] = [];
	for (let i = 0; i < count; i++) {
		while ((await control.pendingDeliveries()).pending >= IN_FLIGHT) await sleep(5);
		const seq = firstSeq + i;
		seqs.push(seq);
		await control.simulateEvent(event, payload(index, seq));
	}
	const wanted = new Set(seqs);
	const deadline = Date.now() + 600_000;
	let attempts: DeliveryAttempt[] = [];
	for (;;) {
		const { pending } = await control.pendingDeliveries();
		attempts = (await control.deliveries({ subscriptionId })).filter((a) =>
			wanted.has(seqOf(a.body)),
		);
		if (
			(pending === 0 && new Set(attempts.map((a) => a.log_id)).size >= count) ||
			Date.now() > deadline
		)
			break;
		await sleep(200);
	}
	const ms = Math.max(...attempts.map(answeredAt)) - Math.min(...attempts.map(sentAt));
	progress(
		`webhook-scale: phase ${index} (${receiver}): ${count} events, ${attempts.length} attempts, ${seconds(ms)}`,
	);
	const cpuAtEnd = cpuNow(stack);
	const cpuMs = Object.fromEntries(
		CPU_GROUPS.map((group) => [group, cpuAtEnd[group] - cpuAtStart[group]]),
	) as Record<CpuGroup, number>;
	return { receiver, index, seqs, attempts, ms, cpuMs };
}

/** Waits until the workflow's finished executions stop growing (or reach `expected`); reads them with data. */
async function executionsOf(
	client: N8nClient,
	workflowId: string,
	expected: number,
): Promise<ExecutionSummary[]> {
	let last = -1;
	let quietSince = Date.now();
	const deadline = Date.now() + 600_000;
	for (;;) {
		const all = await client.listExecutions({ workflowId });
		const done = all.filter((e) => !['new', 'running', 'waiting'].includes(e.status));
		// quiet: neither new executions nor newly finished ones (the workers may still be busy
		// with a backlog long after the last delivery was answered)
		const progressMark = all.length * 1_000_000 + done.length;
		if (progressMark !== last) {
			last = progressMark;
			quietSince = Date.now();
		}
		if (
			(done.length >= expected && done.length === all.length && Date.now() - quietSince > 5_000) ||
			Date.now() - quietSince > 60_000 ||
			Date.now() > deadline
		)
			break;
		await sleep(1_000);
	}
	return client.listExecutions({ workflowId, includeData: true });
}

interface ReceiverFigures {
	deliveries: number;
	rate: number;
	phaseRates: number[];
	lost: number;
	duplicates: number;
	failed: number;
	p50: number;
	p99: number;
	retries: number;
	timeouts: number;
	notAccepted: number;
	/** CPU of each part of the stack during the receiver's phases ÷ the requests (attempts) */
	cpuMsPerRequest: Record<CpuGroup, number>;
}

function figures(
	phases: Phase[],
	executions: ExecutionSummary[],
	seqOfExecution: (e: ExecutionSummary) => number,
): ReceiverFigures {
	const firstSent = new Map<number, number>();
	const lastBySeq = new Map<number, DeliveryAttempt>();
	for (const a of phases.flatMap((p) => p.attempts)) {
		const seq = seqOf(a.body);
		if (a.attempt === 1) firstSent.set(seq, sentAt(a));
		const last = lastBySeq.get(seq);
		if (!last || a.attempt > last.attempt) lastBySeq.set(seq, a);
	}
	const seqs = phases.flatMap((p) => p.seqs);
	const executed = executions.map(seqOfExecution);
	const distinct = new Set(executed.filter((s) => firstSent.has(s)));
	const latencies = executions
		.map((e) => Date.parse(e.startedAt) - (firstSent.get(seqOfExecution(e)) ?? NaN))
		.filter(Number.isFinite);
	const attempts = phases.flatMap((p) => p.attempts);
	return {
		deliveries: seqs.length,
		rate: seqs.length / (phases.reduce((sum, p) => sum + p.ms, 0) / 1000),
		phaseRates: phases.map((p) => p.seqs.length / (p.ms / 1000)),
		lost: seqs.filter((s) => !distinct.has(s)).length,
		duplicates: executed.filter((s) => firstSent.has(s)).length - distinct.size,
		failed: executions.filter((e) => e.status !== 'success').length,
		p50: percentile(latencies, 50),
		p99: percentile(latencies, 99),
		retries: attempts.filter((a) => a.attempt > 1).length,
		timeouts: attempts.filter((a) => a.status_code === null).length,
		notAccepted: [...lastBySeq.values()].filter((a) => !ok(a)).length,
		cpuMsPerRequest: Object.fromEntries(
			CPU_GROUPS.map((group) => [
				group,
				phases.reduce((sum, p) => sum + p.cpuMs[group], 0) / attempts.length,
			]),
		) as Record<CpuGroup, number>,
	};
}

/**
 * Extra environment of every n8n process of this row, as JSON in LP_BENCH_N8N_ENV (e.g.
 * `{"N8N_EXPRESSION_ENGINE_POOL_SIZE":"4"}`), to compare n8n settings; recorded in the row.
 */
const extraN8nEnv: Record<string, string> = JSON.parse(process.env.LP_BENCH_N8N_ENV || '{}');
/**
 * n8n settings of the two webhook processes (scripts/n8n/queue.ts `webhookSettings`):
 * `recommended` (default: RECOMMENDED_WEBHOOK_PROCESS_ENV, docs/webhook-throughput.md) or `n8n`
 * (n8n's own defaults), from LP_BENCH_WEBHOOK_SETTINGS; LP_BENCH_WEBHOOK_ENV (JSON) adds settings
 * to the webhook processes only. Both receivers run under the same settings; recorded in the row.
 */
const webhookSettings = (process.env.LP_BENCH_WEBHOOK_SETTINGS || 'recommended') as
	| 'n8n'
	| 'recommended';
if (webhookSettings !== 'n8n' && webhookSettings !== 'recommended')
	throw new Error(
		`LP_BENCH_WEBHOOK_SETTINGS must be 'recommended' or 'n8n', not '${webhookSettings}'`,
	);
const extraWebhookEnv: Record<string, string> = JSON.parse(
	process.env.LP_BENCH_WEBHOOK_ENV || '{}',
);

export async function run(_options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Trigger at scale: ${EVENTS * PHASES} deliveries through 2 webhook processes vs n8n's Webhook node`;
	const mode = `real n8n ${N8N_VERSION}, queue mode: main + 2 workers + 2 webhook processes behind a round-robin TLS front, PostgreSQL, Redis`;
	let stack: QueueStack | undefined;
	const loads: number[] = [];
	const sampler = setInterval(() => loads.push(os.loadavg()[0]), 5_000);
	const loadAtStart = os.loadavg()[0];
	try {
		stack = await startQueueStack({
			name: 'bench-scale',
			sandbox: true,
			sandboxArgs: ['--quiet'],
			workers: 2,
			concurrency: 10,
			webhookProcesses: 2,
			n8nEnv: extraN8nEnv,
			webhookSettings,
			webhookEnv: extraWebhookEnv,
		});
		const { client } = stack;
		const control = stack.sandbox!.control;
		await control.setConfig({ rateLimitPerMinute: 10_000 });

		const grant = await control.issueRefreshToken(`bench-scale-trigger-${process.pid}`);
		const credentialId = `benchScale${process.pid}`.slice(0, 16);
		await stack.host.importCredentials([sandboxCredential(credentialId, 'Bench scale', grant)]);
		const triggerWorkflow = await workflow(client, 'bench: trigger at scale', {
			name: TRIGGER_NODE,
			type: 'n8n-nodes-learning-platform.learningPlatformTrigger',
			typeVersion: 1.1,
			webhookId: randomUUID(),
			parameters: { event: TRIGGER_EVENT },
			credentials: { learningPlatformApi: { id: credentialId, name: 'Bench scale' } },
		});
		const triggerSubscription = (await control.subscriptions(grant.username)).find(
			(s) => s.deleted_at === null,
		);
		if (!triggerSubscription) throw new Error('the activation registered no subscription');
		const path = `bench-scale-${process.pid}`;
		const webhookWorkflow = await workflow(client, 'bench: Webhook node at scale', {
			name: WEBHOOK_NODE,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			webhookId: randomUUID(),
			parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
		});
		const webhookSubscription = await subscribe(
			stack,
			control,
			`${stack.webhookBaseUrl}webhook/${path}`,
		);
		progress(
			`webhook-scale: trigger subscription ${triggerSubscription.id}, Webhook node subscription ${webhookSubscription.id}`,
		);

		// A warm-up of both paths (code compiled and loaded, connection pools filled in every
		// process), not counted; then the workers finish its executions before the phases start.
		await runPhase(control, 'trigger', -1, triggerSubscription.id, 800_000, stack, WARM_UP);
		await runPhase(
			control,
			'webhook',
			-1,
			webhookSubscription.id,
			800_000 + WARM_UP,
			stack,
			WARM_UP,
		);
		await executionsOf(client, triggerWorkflow, WARM_UP);
		await executionsOf(client, webhookWorkflow, WARM_UP);
		const warmTrigger = (await client.listExecutions({ workflowId: triggerWorkflow })).length;
		const warmWebhook = (await client.listExecutions({ workflowId: webhookWorkflow })).length;

		const webhookPids = stack.webhookProcesses.map((p) => p.proc!.pid);
		const phases: Phase[] = [];
		const loadBefore = os.loadavg()[0];
		for (let i = 0; i < PHASES * 2; i++) {
			const receiver: Receiver = i % 2 === 0 ? 'trigger' : 'webhook';
			phases.push(
				await runPhase(
					control,
					receiver,
					i,
					receiver === 'trigger' ? triggerSubscription.id : webhookSubscription.id,
					i * EVENTS,
					stack,
				),
			);
		}
		const loadAfter = os.loadavg()[0];

		progress('webhook-scale: waiting for the executions ...');
		const inPhases = (seq: number) => seq >= 0 && seq < PHASES * 2 * EVENTS;
		const triggerSeq = (e: ExecutionSummary) =>
			Number(
				(nodeOutput(e, TRIGGER_NODE)[0]?.payload as { bench_seq?: number } | undefined)?.bench_seq,
			);
		const webhookSeq = (e: ExecutionSummary) =>
			Number(
				(nodeOutput(e, WEBHOOK_NODE)[0]?.body as { payload?: { bench_seq?: number } } | undefined)
					?.payload?.bench_seq,
			);
		const triggerExecutions = (
			await executionsOf(client, triggerWorkflow, PHASES * EVENTS + warmTrigger)
		).filter((e) => inPhases(triggerSeq(e)));
		const webhookExecutions = (
			await executionsOf(client, webhookWorkflow, PHASES * EVENTS + warmWebhook)
		).filter((e) => inPhases(webhookSeq(e)));
		const t = figures(
			phases.filter((p) => p.receiver === 'trigger'),
			triggerExecutions,
			triggerSeq,
		);
		const w = figures(
			phases.filter((p) => p.receiver === 'webhook'),
			webhookExecutions,
			webhookSeq,
		);
		const ratio = t.rate / w.rate;
		const clean = t.lost === 0 && t.duplicates === 0;
		const served: Record<string, number> = {};
		for (const r of stack.front.requests.filter((x) => x.url.startsWith('/webhook/')))
			served[r.backend] = (served[r.backend] ?? 0) + 1;
		clearInterval(sampler);
		loads.push(os.loadavg()[0]);

		const both = (name: string, f: (x: ReceiverFigures) => string) =>
			metric(name, null, `${f(t)} / ${f(w)}`);
		const metrics: Metric[] = [
			metric(
				'trigger deliveries/s with 0 lost and 0 duplicates',
				clean ? t.rate : null,
				clean
					? `${fixed(t.rate, 1)} (phases ${t.phaseRates.map((r) => fixed(r, 1)).join(', ')})`
					: `not sustained: ${fixed(t.rate, 1)}/s with ${t.lost} lost, ${t.duplicates} duplicates`,
				{ text: '0 lost, 0 duplicates', pass: clean },
			),
			metric(
				"n8n's Webhook node deliveries/s",
				w.rate,
				`${fixed(w.rate, 1)} (phases ${w.phaseRates.map((r) => fixed(r, 1)).join(', ')})`,
			),
			metric('ratio trigger ÷ Webhook node (deliveries/s)', ratio, fixed(ratio, 2), {
				text: '≥ 0.9',
				pass: ratio >= 0.9,
			}),
			both('lost: trigger / Webhook node', (x) => String(x.lost)),
			both('duplicates: trigger / Webhook node', (x) => String(x.duplicates)),
			both(
				'delivery → execution start p50 / p99: trigger / Webhook node',
				(x) => `${x.p50} ms, ${x.p99} ms`,
			),
			both(
				'retries / time-outs / not accepted: trigger / Webhook node',
				(x) => `${x.retries}, ${x.timeouts}, ${x.notAccepted}`,
			),
			both('failed executions: trigger / Webhook node', (x) => String(x.failed)),
			...CPU_GROUPS.map((group) =>
				both(`CPU ms per request (attempt), ${group}: trigger / Webhook node`, (x) =>
					fixed(x.cpuMsPerRequest[group], 1),
				),
			),
			metric(
				'peak RSS of the webhook processes (MiB)',
				Math.max(...webhookPids.map(peakRssMiB)),
				webhookPids.map((pid) => fixed(peakRssMiB(pid), 0)).join(', '),
			),
			metric(
				'load average (1 min): start, during (mean / max), end',
				Math.max(...loads),
				`${fixed(loadAtStart, 2)}, ${fixed(loads.reduce((a, b) => a + b, 0) / loads.length, 2)} / ${fixed(Math.max(...loads), 2)}, ${fixed(os.loadavg()[0], 2)}`,
			),
		];
		return {
			id: 'webhook-scale',
			title,
			mode,
			settings: {
				eventsPerPhase: EVENTS,
				phasesPerReceiver: PHASES,
				inFlight: IN_FLIGHT,
				workers: 2,
				workerConcurrency: 10,
				webhookProcesses: 2,
				delivery:
					'sandbox defaults: concurrent, 5 s time-out, 3 attempts, back-off 200 ms doubling',
				n8nEnv: extraN8nEnv,
				webhookSettings,
				webhookProcessEnv: stack.webhookEnv,
			},
			metrics,
			notes: [
				`n8n settings of the webhook processes: ${webhookSettings === 'recommended' ? 'recommended' : "n8n's defaults"}${
					Object.keys(stack.webhookEnv).length
						? ` (${Object.entries(stack.webhookEnv)
								.map(([k, v]) => `${k}=${v}`)
								.join(', ')})`
						: ''
				}${
					Object.keys(extraN8nEnv).length
						? `; every process: ${Object.entries(extraN8nEnv)
								.map(([k, v]) => `${k}=${v}`)
								.join(', ')}`
						: ''
				}; both receivers ran under them`,
				`phases alternate trigger, Webhook node, ... (${PHASES} each, ${EVENTS} events each), fired through the sandbox control API with at most ${IN_FLIGHT} deliveries pending; a phase's time runs from its first send to its last answer (sandbox attempt rows)`,
				'the Webhook node gets the same bodies but for the event name (its subscription is for Completion_updated), with a signing key and token too; both answer when received (after n8n has created and enqueued the execution)',
				`/webhook/ requests per backend (front log, warm-up included): ${JSON.stringify(served)}`,
				`load average (1 min) before the phases ${fixed(loadBefore, 2)}, after ${fixed(loadAfter, 2)}; samples every 5 s: ${loads.map((l) => fixed(l, 1)).join(' ')}`,
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'webhook-scale', title, mode }, t0, error);
	} finally {
		clearInterval(sampler);
		await stack?.stop().catch(() => undefined);
	}
}
