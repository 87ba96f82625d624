/**
 * Rows 4b and 4c, the webhook trigger at scale: queue mode with dedicated webhook processes (a real
 * n8n 2.40.7: PostgreSQL, Redis, main, 2 workers, 2 `n8n webhook` processes behind the TLS front's
 * round-robin; scripts/n8n/queue.ts), the Learning Platform Trigger side by side with n8n's bare
 * Webhook node (4b, the floor of n8n's own cost) and with the chain a user builds without this
 * package (4c: Webhook → Crypto → IF → Remove Duplicates → "HR step", bench/workflows/).
 *
 * Three active workflows (set up by bench/lib/receivers.ts, shared with row 4d), each subscribed
 * by its own API user to its own event (one simulated event reaches one receiver), each with a
 * signing key and a token:
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
import * as os from 'node:os';

import type { ExecutionSummary, N8nClient } from '../../scripts/n8n/client';
import { startQueueStack, type QueueStack } from '../../scripts/n8n/queue';
import type { WebhookRouting } from '../../scripts/n8n/tls-front';
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
	type DeliveryFigures,
	type PhaseTimes,
	type Receiver,
} from '../lib/receivers';
import { N8N_VERSION } from '../../scripts/n8n/paths';

const EVENTS = 500;
const PHASES = 2;
const IN_FLIGHT = 16;
/** deliveries per receiver before the measured phases (not counted) */
const WARM_UP = 100;
/** the sandbox drops n8n's answer to every DROP_EVERY-th first attempt: the platform retries it */
const DROP_EVERY = 5;
/**
 * deliveries to the trigger after the warm-up, not counted (LP_BENCH_SCALE_TRIGGER_FILL, default
 * 0): its ledger as a workflow's is after days of traffic (3,000: three days at 1,000 a day)
 */
const TRIGGER_FILL = sizeFromEnv('LP_BENCH_SCALE_TRIGGER_FILL', 0, 0);

interface Phase extends PhaseTimes {
	index: number;
	/** CPU time (user + system, all threads) of each part of the stack, first send → executions finished */
	cpuMs: Record<CpuGroup, number>;
	/** bytes of write-ahead log PostgreSQL wrote, first send → executions finished */
	walBytes: number;
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
	const all = allPids();
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
	const { seqs, attempts, firstSend, answeredMs } = await fireEvents(control, {
		event: EVENT_OF[receiver],
		phase: index,
		firstSeq,
		count,
		inFlight: IN_FLIGHT,
		subscriptionIds: [subscriptionId],
	});
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

interface ReceiverFigures extends DeliveryFigures {
	/** CPU of each part of the stack during the receiver's phases ÷ its deliveries */
	cpuMsPerDelivery: Record<CpuGroup, number>;
	walBytesPerDelivery: number;
}

function figures(
	phases: Phase[],
	executions: ExecutionSummary[],
	seqOfExecution: (e: ExecutionSummary) => number,
): ReceiverFigures {
	const deliveries = phases.reduce((sum, p) => sum + p.seqs.length, 0);
	return {
		...deliveryFigures(phases, executions, seqOfExecution),
		cpuMsPerDelivery: Object.fromEntries(
			CPU_GROUPS.map((group) => [
				group,
				phases.reduce((sum, p) => sum + p.cpuMs[group], 0) / deliveries,
			]),
		) as Record<CpuGroup, number>,
		walBytesPerDelivery: phases.reduce((sum, p) => sum + p.walBytes, 0) / deliveries,
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

		const { workflowOf, subscriptionOf } = await setUpReceivers(stack, control, {
			label: 'scale',
		});
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
		if (TRIGGER_FILL > 0)
			await runPhase(
				stack,
				'trigger',
				-2,
				subscriptionOf.trigger,
				workflowOf.trigger,
				900_000,
				TRIGGER_FILL,
			);

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
			await control.deliveries({ subscriptionId: subscriptionOf.trigger })
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
		const measured = {} as Record<Receiver, ReceiverFigures>;
		for (const receiver of RECEIVERS) {
			const all = await executionsOf(client, workflowOf[receiver]);
			const ofPhases = all.filter((e) => inPhases(SEQ_RECEIVED[receiver](e)));
			measured[receiver] = figures(
				phases.filter((p) => p.receiver === receiver),
				ofPhases,
				SEQ_OF_EXECUTION[receiver],
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
				triggerFill: TRIGGER_FILL,
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
					Object.keys(stack.webhookEnv).length ? ` (${envListed(stack.webhookEnv)})` : ''
				}${Object.keys(extraN8nEnv).length ? `; every process: ${envListed(extraN8nEnv)}` : ''}${
					Object.keys(extraWorkerEnv).length ? `; workers: ${envListed(extraWorkerEnv)}` : ''
				}; every receiver ran under them`,
				`phases rotate trigger, Webhook node, chain (${PHASES} each, ${EVENTS} events each)${TRIGGER_FILL > 0 ? ` after ${TRIGGER_FILL} deliveries to the trigger (its ledger filled, not counted)` : ''}, fired through the sandbox control API with at most ${IN_FLIGHT} deliveries pending; the sandbox drops n8n's answer to every ${DROP_EVERY}th first attempt, so the platform retries it`,
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
