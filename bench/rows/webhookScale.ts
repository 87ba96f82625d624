/**
 * Rows 4b and 4c, the webhook trigger at scale: queue mode with dedicated webhook processes (a real
 * n8n 2.40.7: PostgreSQL, Redis, main, 2 workers, 2 `n8n webhook` processes behind the TLS front's
 * round-robin; scripts/n8n/queue.ts), the Learning Platform Trigger side by side with n8n's bare
 * Webhook node (4b, the floor of n8n's own cost) and with the chain a user builds without this
 * package (4c: Webhook → Crypto → IF → Remove Duplicates → "HR step", bench/workflows/).
 *
 * Three active workflows, each subscribed by its own API user to its own event (one simulated
 * event reaches one receiver), each with a signing key and a token:
 * - T: Learning Platform Trigger (defaults) → No-Op, `Completion_created`;
 * - W: n8n's Webhook node (POST, answers when received, like the trigger) → No-Op, `Completion_updated`;
 * - C: the hand-built chain, `Completion_archived`.
 * Bodies are the same but for the event name: `{event, payload: {bench_phase, bench_seq,
 * completion}, now, delivery_id, api_version}`. Phases rotate T, W, C (PHASES per receiver,
 * EVENTS each): the bench fires events through the control API, keeping at most IN_FLIGHT
 * deliveries pending (a closed loop); the sandbox drops n8n's answer to every DROP_EVERY-th first
 * attempt, so the platform retries it; each phase waits for its answers and then for the workers to
 * finish its executions, so no phase pays for another's backlog.
 *
 * - deliveries/s of a phase: its deliveries ÷ (last execution finished − first send), from the
 *   sandbox's attempt rows (`sent_at` with milliseconds) and n8n's stored `stoppedAt`; a
 *   receiver's rate: all its deliveries ÷ the sum of its phases' times; ratios T ÷ C (≥ 1.0) and
 *   T ÷ W (≥ 0.8); the answer rate (first send → last answer) besides;
 * - lost (no execution handed the completion on) and duplicates (beyond one per completion), from
 *   n8n's stored executions (the trigger's output, the Webhook node's body, the body that reached
 *   the chain's last node), per receiver;
 * - p50 / p99 from delivery (the first attempt's send time) to execution start (`startedAt`);
 * - CPU time per delivery of each part of the stack (/proc) and PostgreSQL's write-ahead log bytes
 *   per delivery, over each phase; the trigger's static data and each workflow's stored copy per
 *   execution (`execution_data.workflowData`), in bytes;
 * - load average (1 min) sampled every 5 s during the row, and retries and time-outs seen.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { request } from 'undici';

import type { DeliveryAttempt, SandboxClient } from '../../sandbox/client';
import { nodeOutput, type ExecutionSummary, type N8nClient } from '../../scripts/n8n/client';
import { startQueueStack, type QueueStack } from '../../scripts/n8n/queue';
import type { WebhookRouting } from '../../scripts/n8n/tls-front';
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
/** the sandbox drops n8n's answer to every DROP_EVERY-th first attempt: the platform retries it */
const DROP_EVERY = 5;
const TRIGGER_NODE = 'Trigger';
const WEBHOOK_NODE = 'Webhook';
/** the hand-built chain's last node (bench/workflows/hand-built-chain.json): a completion that reached it was handed on */
const CHAIN_LAST_NODE = 'HR step';

const RECEIVERS = ['trigger', 'webhook', 'chain'] as const;
type Receiver = (typeof RECEIVERS)[number];
const RECEIVER_NAMES: Record<Receiver, string> = {
	trigger: 'trigger',
	webhook: 'Webhook node',
	chain: 'hand-built chain',
};
/** Each receiver is subscribed to its own event, so one simulated event reaches one receiver. */
const EVENT_OF: Record<Receiver, string> = {
	trigger: 'Events\\Courses\\Completion_created',
	webhook: 'Events\\Courses\\Completion_updated',
	chain: 'Events\\Courses\\Completion_archived',
};

interface Phase {
	receiver: Receiver;
	index: number;
	seqs: number[];
	/** the attempts of this phase's deliveries */
	attempts: DeliveryAttempt[];
	/** first send → last answer */
	answeredMs: number;
	/** first send → the last of the phase's executions finished */
	processedMs: number;
	/** CPU time (user + system, all threads) of each part of the stack, first send → executions finished */
	cpuMs: Record<CpuGroup, number>;
	/** bytes of write-ahead log PostgreSQL wrote, first send → executions finished */
	walBytes: number;
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

/**
 * Another API user's own subscription to `event` at `url`, with a signing key and a token (the
 * bench exchanges its refresh token; n8n never sees it). Returns its id and secrets.
 */
async function subscribe(
	stack: QueueStack,
	control: SandboxClient,
	event: string,
	url: string,
): Promise<{ id: number; signingKey: string; authToken: string }> {
	const sandbox = stack.sandbox!;
	const grant = await control.issueRefreshToken(`bench-scale-${randomUUID().slice(0, 8)}`);
	const headers = { 'user-agent': 'lp-bench/1.0', accept: 'application/json' };
	const tenancy = encodeURIComponent(sandbox.tenancyId);
	const exchange = await request(
		`${sandbox.url}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${tenancy}/apikeys?username=${encodeURIComponent(grant.username)}`,
		{ headers: { ...headers, authorization: `Bearer ${grant.refresh_token}` } },
	);
	const { api_key: apiKey } = (await exchange.body.json()) as { api_key: string };
	const signingKey = randomUUID();
	const authToken = randomUUID();
	const created = await request(`${sandbox.url}/api/v2/${tenancy}/webhooks`, {
		method: 'POST',
		headers: {
			...headers,
			authorization: `Bearer ${apiKey}`,
			'content-type': 'application/json',
		},
		body: JSON.stringify({ event, url, signing_key: signingKey, auth_token: authToken }),
	});
	const subscription = (await created.body.json()) as { id?: number };
	if (created.statusCode !== 201 || subscription.id === undefined)
		throw new Error(`creating the subscription for ${event}: ${created.statusCode}`);
	return { id: subscription.id, signingKey, authToken };
}

/** "receiver → No-Op", active. */
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

/** The workflow file a user would build without the package, with its placeholders filled in, active. */
async function chainWorkflow(
	client: N8nClient,
	fill: Record<
		| '__PATH__'
		| '__CREDENTIAL_ID__'
		| '__CREDENTIAL_NAME__'
		| '__CRYPTO_CREDENTIAL_ID__'
		| '__CRYPTO_CREDENTIAL_NAME__',
		string
	>,
): Promise<string> {
	let text = fs.readFileSync(CHAIN_WORKFLOW_FILE, 'utf8');
	for (const [placeholder, value] of Object.entries(fill))
		text = text.split(placeholder).join(value);
	const chain = JSON.parse(text) as {
		name: string;
		nodes: unknown[];
		connections: unknown;
		settings?: unknown;
	};
	const { id } = await client.createWorkflow({
		name: `bench: ${chain.name}`,
		nodes: chain.nodes,
		connections: chain.connections,
		settings: chain.settings,
	});
	await client.activate(id);
	return id;
}

const CHAIN_WORKFLOW_FILE = path.join(__dirname, '..', 'workflows', 'hand-built-chain.json');

/** One number from PostgreSQL (the n8n database). */
async function sqlNumber(stack: QueueStack, statement: string): Promise<number> {
	return Number((await stack.postgres.sql(statement)).trim());
}

const walPosition = (stack: QueueStack) =>
	stack.postgres.sql('select pg_current_wal_lsn()').then((text) => text.trim());

/** The newest execution id so far (n8n's ids on PostgreSQL are a sequence). */
const lastExecutionId = (stack: QueueStack) =>
	sqlNumber(stack, 'select coalesce(max(id), 0) from execution_entity');

/**
 * Waits until every execution of `workflowId` created after `afterId` has finished (the answers
 * are in, so every execution the phase starts exists) and returns when the last one stopped (ms).
 */
async function executionsFinished(
	stack: QueueStack,
	workflowId: string,
	afterId: number,
): Promise<number> {
	const where = `"workflowId" = '${workflowId}' and id > ${afterId}`;
	const deadline = Date.now() + 600_000;
	while (Date.now() < deadline) {
		const unfinished = await sqlNumber(
			stack,
			`select count(*) from execution_entity where ${where} and status in ('new', 'running', 'waiting')`,
		);
		if (unfinished === 0) break;
		await sleep(250);
	}
	return sqlNumber(
		stack,
		`select coalesce(extract(epoch from max("stoppedAt")) * 1000, 0) from execution_entity where ${where}`,
	);
}

/**
 * Fires one phase's events with at most IN_FLIGHT deliveries pending, waits for their answers
 * and for the workers to finish the executions they started.
 */
async function runPhase(
	stack: QueueStack,
	receiver: Receiver,
	index: number,
	subscriptionId: number,
	workflowId: string,
	firstSeq: number,
	count = EVENTS,
): Promise<Phase> {
	const control = stack.sandbox!.control;
	const afterId = await lastExecutionId(stack);
	const walAtStart = await walPosition(stack);
	const cpuAtStart = cpuNow(stack);
	const seqs: number[] = [];
	for (let i = 0; i < count; i++) {
		while ((await control.pendingDeliveries()).pending >= IN_FLIGHT) await sleep(5);
		const seq = firstSeq + i;
		seqs.push(seq);
		await control.simulateEvent(EVENT_OF[receiver], payload(index, seq));
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
	const firstSend = Math.min(...attempts.map(sentAt));
	const answeredMs = Math.max(...attempts.map(answeredAt)) - firstSend;
	const lastStopped = await executionsFinished(stack, workflowId, afterId);
	const processedMs = Math.max(lastStopped - firstSend, answeredMs);
	const cpuAtEnd = cpuNow(stack);
	const walBytes = await sqlNumber(
		stack,
		`select pg_wal_lsn_diff('${await walPosition(stack)}', '${walAtStart}')`,
	);
	progress(
		`webhook-scale: phase ${index} (${RECEIVER_NAMES[receiver]}): ${count} events, ${attempts.length} attempts, answered in ${seconds(answeredMs)}, executions finished after ${seconds(processedMs)}`,
	);
	const cpuMs = Object.fromEntries(
		CPU_GROUPS.map((group) => [group, cpuAtEnd[group] - cpuAtStart[group]]),
	) as Record<CpuGroup, number>;
	return { receiver, index, seqs, attempts, answeredMs, processedMs, cpuMs, walBytes };
}

/** The workflow's executions with their data (every one has finished: runPhase waited). */
function executionsOf(client: N8nClient, workflowId: string): Promise<ExecutionSummary[]> {
	return client.listExecutions({ workflowId, includeData: true });
}

interface ReceiverFigures {
	deliveries: number;
	/** deliveries ÷ the phases' time from first send to last execution finished */
	rate: number;
	phaseRates: number[];
	/** deliveries ÷ the phases' time from first send to last answer */
	answerRate: number;
	/** executions n8n started (the chain starts one per accepted attempt, stopped or not) */
	executions: number;
	lost: number;
	duplicates: number;
	failed: number;
	p50: number;
	p99: number;
	retries: number;
	timeouts: number;
	dropped: number;
	notAccepted: number;
	/** CPU of each part of the stack during the receiver's phases ÷ its deliveries */
	cpuMsPerDelivery: Record<CpuGroup, number>;
	walBytesPerDelivery: number;
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
	const handedOn = executions.filter((e) => firstSent.has(seqOfExecution(e)));
	const executed = handedOn.map(seqOfExecution);
	const distinct = new Set(executed);
	const latencies = handedOn
		.map((e) => Date.parse(e.startedAt) - (firstSent.get(seqOfExecution(e)) ?? NaN))
		.filter(Number.isFinite);
	const attempts = phases.flatMap((p) => p.attempts);
	const totalSeconds = (ms: (p: Phase) => number) =>
		phases.reduce((sum, p) => sum + ms(p), 0) / 1000;
	return {
		deliveries: seqs.length,
		rate: seqs.length / totalSeconds((p) => p.processedMs),
		phaseRates: phases.map((p) => p.seqs.length / (p.processedMs / 1000)),
		answerRate: seqs.length / totalSeconds((p) => p.answeredMs),
		executions: executions.length,
		lost: seqs.filter((s) => !distinct.has(s)).length,
		duplicates: executed.length - distinct.size,
		failed: executions.filter((e) => e.status !== 'success').length,
		p50: percentile(latencies, 50),
		p99: percentile(latencies, 99),
		retries: attempts.filter((a) => a.attempt > 1).length,
		timeouts: attempts.filter((a) => a.status_code === null && !a.error?.includes('dropped'))
			.length,
		dropped: attempts.filter((a) => a.error?.includes('dropped')).length,
		notAccepted: [...lastBySeq.values()].filter((a) => !ok(a)).length,
		cpuMsPerDelivery: Object.fromEntries(
			CPU_GROUPS.map((group) => [
				group,
				phases.reduce((sum, p) => sum + p.cpuMs[group], 0) / seqs.length,
			]),
		) as Record<CpuGroup, number>,
		walBytesPerDelivery: phases.reduce((sum, p) => sum + p.walBytes, 0) / seqs.length,
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

/**
 * How the front spreads `/webhook/` requests over the two webhook processes, from
 * LP_BENCH_WEBHOOK_ROUTING: `round-robin` (default) or `x-signature` (a retry goes where its
 * first attempt went, as a load balancer hashing that header does; docs/scaling.md).
 */
const webhookRouting = (process.env.LP_BENCH_WEBHOOK_ROUTING || 'round-robin') as WebhookRouting;
if (webhookRouting !== 'round-robin' && webhookRouting !== 'x-signature')
	throw new Error(
		`LP_BENCH_WEBHOOK_ROUTING must be 'round-robin' or 'x-signature', not '${webhookRouting}'`,
	);

/** Extra environment of the two workers only, as JSON in LP_BENCH_WORKER_ENV (e.g. a profiler). */
const extraWorkerEnv: Record<string, string> = JSON.parse(process.env.LP_BENCH_WORKER_ENV || '{}');

const listed = (env: Record<string, string>) =>
	Object.entries(env)
		.map(([k, v]) => `${k}=${v}`)
		.join(', ');

export async function run(_options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Trigger at scale: ${EVENTS * PHASES} deliveries each through 2 webhook processes, beside n8n's Webhook node and the hand-built chain`;
	const mode = `real n8n ${N8N_VERSION}, queue mode: main + 2 workers + 2 webhook processes behind a TLS front routing by ${webhookRouting}, PostgreSQL, Redis`;
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
			workerEnv: extraWorkerEnv,
		});
		const { client } = stack;
		const control = stack.sandbox!.control;
		stack.front.setWebhookRouting(webhookRouting);
		await control.setConfig({ rateLimitPerMinute: 10_000 });

		const grant = await control.issueRefreshToken(`bench-scale-trigger-${process.pid}`);
		const credentialId = `benchScale${process.pid}`.slice(0, 16);
		const chainCredentialId = `benchChain${process.pid}`.slice(0, 16);
		const chainCryptoCredentialId = `benchHmac${process.pid}`.slice(0, 16);
		const chainPath = `bench-chain-${process.pid}`;
		const webhookPath = `bench-scale-${process.pid}`;
		const chainSubscription = await subscribe(
			stack,
			control,
			EVENT_OF.chain,
			`${stack.webhookBaseUrl}webhook/${chainPath}`,
		);
		await stack.host.importCredentials([
			sandboxCredential(credentialId, 'Bench scale', grant),
			{
				id: chainCredentialId,
				name: 'Bench chain token',
				type: 'httpHeaderAuth',
				data: { name: 'Authorization', value: `Bearer ${chainSubscription.authToken}` },
			},
			{
				id: chainCryptoCredentialId,
				name: 'Bench chain signing key',
				type: 'crypto',
				data: { hmacSecret: chainSubscription.signingKey },
			},
		]);
		const workflowOf: Record<Receiver, string> = {
			// at its defaults, as a node is added (recovery of missed deliveries on)
			trigger: await workflow(client, 'bench: trigger at scale', {
				name: TRIGGER_NODE,
				type: 'n8n-nodes-learning-platform.learningPlatformTrigger',
				typeVersion: 2,
				webhookId: randomUUID(),
				parameters: { event: EVENT_OF.trigger },
				credentials: { learningPlatformApi: { id: credentialId, name: 'Bench scale' } },
			}),
			webhook: await workflow(client, 'bench: Webhook node at scale', {
				name: WEBHOOK_NODE,
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				webhookId: randomUUID(),
				parameters: {
					httpMethod: 'POST',
					path: webhookPath,
					responseMode: 'onReceived',
					options: {},
				},
			}),
			chain: await chainWorkflow(client, {
				__PATH__: chainPath,
				__CREDENTIAL_ID__: chainCredentialId,
				__CREDENTIAL_NAME__: 'Bench chain token',
				__CRYPTO_CREDENTIAL_ID__: chainCryptoCredentialId,
				__CRYPTO_CREDENTIAL_NAME__: 'Bench chain signing key',
			}),
		};
		const triggerSubscription = (await control.subscriptions(grant.username)).find(
			(s) => s.deleted_at === null,
		);
		if (!triggerSubscription) throw new Error('the activation registered no subscription');
		const webhookSubscription = await subscribe(
			stack,
			control,
			EVENT_OF.webhook,
			`${stack.webhookBaseUrl}webhook/${webhookPath}`,
		);
		const subscriptionOf: Record<Receiver, number> = {
			trigger: triggerSubscription.id,
			webhook: webhookSubscription.id,
			chain: chainSubscription.id,
		};
		progress(`webhook-scale: subscriptions ${JSON.stringify(subscriptionOf)}`);
		await control.dropDeliveryAnswers({ every: DROP_EVERY, pathPattern: '^/webhook/' });

		// A warm-up of every path (code compiled and loaded, connection pools filled in every
		// process), not counted; each phase waits for the workers to finish its executions.
		let warmSeq = 800_000;
		for (const receiver of RECEIVERS) {
			await runPhase(
				stack,
				receiver,
				-1,
				subscriptionOf[receiver],
				workflowOf[receiver],
				warmSeq,
				WARM_UP,
			);
			warmSeq += WARM_UP;
		}

		const webhookPids = stack.webhookProcesses.map((p) => p.proc!.pid);
		const phases: Phase[] = [];
		const loadBefore = os.loadavg()[0];
		for (let i = 0; i < PHASES * RECEIVERS.length; i++) {
			const receiver = RECEIVERS[i % RECEIVERS.length];
			phases.push(
				await runPhase(
					stack,
					receiver,
					i,
					subscriptionOf[receiver],
					workflowOf[receiver],
					i * EVENTS,
				),
			);
		}
		const loadAfter = os.loadavg()[0];
		// a redispatch (by the trigger's recovery) carries the delivery id it was asked for
		const redispatches = (
			await control.deliveries({ subscriptionId: triggerSubscription.id })
		).filter((a) => a.delivery_id !== '' && a.attempt === 1).length;
		const staticDataBytes = await sqlNumber(
			stack,
			`select coalesce(octet_length("staticData"::text), 0) from workflow_entity where id = '${workflowOf.trigger}'`,
		);
		const workflowDataBytes = Object.fromEntries(
			await Promise.all(
				RECEIVERS.map(async (receiver) => [
					receiver,
					await sqlNumber(
						stack!,
						`select coalesce(avg(octet_length(d."workflowData"::text)), 0) from execution_data d join execution_entity e on e.id = d."executionId" where e."workflowId" = '${workflowOf[receiver]}'`,
					),
				]),
			),
		) as Record<Receiver, number>;

		progress('webhook-scale: reading the executions ...');
		const inPhases = (seq: number) => seq >= 0 && seq < PHASES * RECEIVERS.length * EVENTS;
		const bodySeq = (item: Record<string, unknown> | undefined) =>
			Number((item?.body as { payload?: { bench_seq?: number } } | undefined)?.payload?.bench_seq);
		const seqOfExecution: Record<Receiver, (e: ExecutionSummary) => number> = {
			trigger: (e) =>
				Number(
					(nodeOutput(e, TRIGGER_NODE)[0]?.payload as { bench_seq?: number } | undefined)
						?.bench_seq,
				),
			webhook: (e) => bodySeq(nodeOutput(e, WEBHOOK_NODE)[0]),
			// handed on = the last node ran; executions the IF or Remove Duplicates stopped do not count
			chain: (e) =>
				e.data?.resultData?.runData?.[CHAIN_LAST_NODE]
					? bodySeq(nodeOutput(e, WEBHOOK_NODE)[0])
					: NaN,
		};
		const measured = {} as Record<Receiver, ReceiverFigures>;
		for (const receiver of RECEIVERS) {
			const all = await executionsOf(client, workflowOf[receiver]);
			const firstNode = receiver === 'trigger' ? TRIGGER_NODE : WEBHOOK_NODE;
			const ofPhases = all.filter((e) =>
				inPhases(
					receiver === 'trigger' ? seqOfExecution.trigger(e) : bodySeq(nodeOutput(e, firstNode)[0]),
				),
			);
			measured[receiver] = figures(
				phases.filter((p) => p.receiver === receiver),
				ofPhases,
				seqOfExecution[receiver],
			);
		}
		const { trigger: t, webhook: w, chain: c } = measured;
		const clean = t.lost === 0 && t.duplicates === 0;
		const ratioToChain = t.rate / c.rate;
		const ratioToWebhook = t.rate / w.rate;
		const served: Record<string, number> = {};
		for (const r of stack.front.requests.filter((x) => x.url.startsWith('/webhook/')))
			served[r.backend] = (served[r.backend] ?? 0) + 1;
		clearInterval(sampler);
		loads.push(os.loadavg()[0]);

		const each = (name: string, f: (x: ReceiverFigures) => string) =>
			metric(
				`${name}: trigger / Webhook node / chain`,
				null,
				RECEIVERS.map((r) => f(measured[r])).join(' / '),
			);
		const rateText = (x: ReceiverFigures) =>
			`${fixed(x.rate, 1)} (phases ${x.phaseRates.map((r) => fixed(r, 1)).join(', ')})`;
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
			metric(
				'ratio trigger ÷ hand-built chain (deliveries/s)',
				ratioToChain,
				fixed(ratioToChain, 2),
				{
					text: '≥ 1.0',
					pass: clean && ratioToChain >= 1.0,
				},
			),
			metric(
				'ratio trigger ÷ Webhook node (deliveries/s)',
				ratioToWebhook,
				fixed(ratioToWebhook, 2),
				{
					text: '≥ 0.8',
					pass: clean && ratioToWebhook >= 0.8,
				},
			),
			each('answered deliveries/s (first send → last answer)', (x) => fixed(x.answerRate, 1)),
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
			each('CPU ms per delivery, whole stack', (x) =>
				fixed(
					CPU_GROUPS.reduce((sum, g) => sum + x.cpuMsPerDelivery[g], 0),
					1,
				),
			),
			each('PostgreSQL write-ahead log bytes per delivery', (x) => fixed(x.walBytesPerDelivery, 0)),
			metric(
				'bytes of the workflow stored with each execution (execution_data.workflowData): trigger / Webhook node / chain',
				null,
				RECEIVERS.map((r) => fixed(workflowDataBytes[r], 0)).join(' / '),
			),
			metric(
				"the trigger's static data at the end (bytes)",
				staticDataBytes,
				String(staticDataBytes),
			),
			metric(
				"redispatches asked for by the trigger's recovery",
				redispatches,
				String(redispatches),
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
				dropEvery: DROP_EVERY,
				workers: 2,
				workerConcurrency: 10,
				webhookProcesses: 2,
				webhookRouting,
				triggerTypeVersion: 2,
				chainWorkflow: 'bench/workflows/hand-built-chain.json',
				delivery:
					'sandbox defaults: concurrent, 5 s time-out, 3 attempts, back-off 200 ms doubling; every 5th first answer dropped',
				n8nEnv: extraN8nEnv,
				webhookSettings,
				webhookProcessEnv: stack.webhookEnv,
				workerEnv: extraWorkerEnv,
			},
			metrics,
			notes: [
				`n8n settings of the webhook processes: ${webhookSettings === 'recommended' ? 'recommended' : "n8n's defaults"}${
					Object.keys(stack.webhookEnv).length ? ` (${listed(stack.webhookEnv)})` : ''
				}${Object.keys(extraN8nEnv).length ? `; every process: ${listed(extraN8nEnv)}` : ''}${
					Object.keys(extraWorkerEnv).length ? `; workers: ${listed(extraWorkerEnv)}` : ''
				}; every receiver ran under them`,
				`phases rotate trigger, Webhook node, chain (${PHASES} each, ${EVENTS} events each), fired through the sandbox control API with at most ${IN_FLIGHT} deliveries pending; the sandbox drops n8n's answer to every ${DROP_EVERY}th first attempt, so the platform retries it`,
				"deliveries/s: a receiver's deliveries ÷ its phases' time from first send to the last execution finished (n8n's stored stoppedAt); each phase waits for its executions before the next starts, and its CPU and write-ahead log are counted over the same span",
				"lost / duplicates: completions with no execution / executions beyond one per completion, from n8n's stored executions (the trigger's output, the Webhook node's body, the body that reached the chain's \"HR step\")",
				'the Webhook node and the chain get the same bodies but for the event name (their subscriptions are for Completion_updated and Completion_archived), signed and with a token; all three answer when received (after n8n has created and enqueued the execution)',
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
