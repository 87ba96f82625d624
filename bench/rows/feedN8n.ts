/**
 * Row 2b, feed sync in a real n8n: the completions feed (about 100,000 records, pages of 500)
 * walked by the Learning Platform node inside n8n 2.40.7, against a bare undici loop over the same
 * pages from the bench process. Row 2 runs the node in-process with the credential handed over
 * from memory; here n8n's own CredentialsHelper loads (queries and decrypts) the credential
 * whenever the node asks for it, which is what a user's n8n pays.
 *
 * Workflow: Webhook (POST, respond when the last node finishes, no response body) → Learning
 * Platform (Completion → Get Many, Return All, Simplify off, no options). The node is the last node
 * and the response has no body, so the 100,000 items are never serialised into the HTTP answer.
 * Execution data of successful runs is saved (`saveDataSuccessExecution: 'all'`): the walk's time
 * is read from it, the node's own `executionTime` in the run data (from the moment n8n calls the
 * node's execute() to its return), which leaves out the webhook, the workflow start and the saving
 * of the 100,000 items; each execution is deleted once read, so the database does not grow.
 * With 'none' n8n deletes the execution at once and only the webhook round trip would be left,
 * which includes that start-up and clean-up.
 *
 * - records per walk: the node's items = the bare loop's records;
 * - requests per walk ÷ ceil(records / 500) (target 1.0), counted in the sandbox's request log;
 * - records/s of the node ÷ records/s of the bare loop (target ≥ 0.8): best ÷ best, and median
 *   ÷ median, over RUNS alternating walks (node, bare loop, HTTP Request node, node, ...);
 * - for reference, n8n's own HTTP Request node paging the same feed (cursor in the query, API key
 *   in a header, one item per page), timed in the same way;
 * - execution time (stoppedAt − startedAt) and webhook round trip beside the node's time: what n8n
 *   adds around the node;
 * - CPU per walk of the client (n8n's process, the bench's) and of the sandbox: on a shared machine
 *   the wall times move with other load, the CPU spent per walk much less.
 *
 * The row shares the real n8n (and its sandbox) of lib/realN8n.ts and runs after the other
 * real-n8n rows. It raises the sandbox's rate limit (restored afterwards) so that pacing does not
 * decide the time, and adds the records to the sandbox's feed (the demo records stay).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';

import { Agent } from 'undici';

import type { SandboxClient } from '../../sandbox/client';
import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import type { Stack } from '../../scripts/n8n/stack';
import {
	failedResult,
	fixed,
	median,
	metric,
	progress,
	seconds,
	sleep,
	type RowResult,
} from '../lib/common';
import { bareFeedLoop, FEED_PAGE, tenancyRoot } from '../lib/feed';
import { REAL_N8N_MODE, realN8n, realN8nSandbox } from '../lib/realN8n';

const RECORDS = 100_000;
const RUNS = 5;
const RATE_LIMIT = 100_000;
const LP_NODE = 'Learning Platform';
const HTTP_NODE = 'HTTP Request';
const TITLE = 'Feed sync in real n8n: ~100,000 records, Return All';

interface TaskData {
	startTime?: number;
	executionTime?: number;
	executionStatus?: string;
	data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
	error?: { message?: string; description?: string };
}

interface CpuPids {
	n8n: number[];
	sandbox: number[];
}

interface Walk {
	/** the node's executionTime in the stored run data */
	nodeMs: number;
	/** CPU time of the n8n process while the node ran (NaN without /proc) */
	nodeCpuMs: number;
	/** CPU time of the sandbox (serving the pages) while the node ran */
	sandboxCpuMs: number;
	/** the stored execution's stoppedAt − startedAt */
	executionMs: number;
	/** the webhook call, sent → answered, on the bench's clock */
	roundTripMs: number;
	records: number;
	requests: number;
	failedRequests: number;
}

/** utime + stime in ms and the parent pid, from /proc/<pid>/stat (ticks of 10 ms: CLK_TCK 100). */
function procStat(pid: number): { cpuMs: number; ppid: number } | undefined {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		// after the name: state, ppid, ..., utime and stime as the 12th and 13th fields
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, ppid: Number(fields[1]) };
	} catch {
		return undefined;
	}
}

/** A process and its children: the sandbox runs under tsx, which starts node as a child. */
function withChildren(pid: number | undefined): number[] {
	if (!pid) return [];
	let entries: string[] = [];
	try {
		entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
	} catch {
		return [pid];
	}
	return [pid, ...entries.map(Number).filter((p) => procStat(p)?.ppid === pid)];
}

/**
 * CPU time (user + system) of some processes, sampled every 50 ms, so that the CPU spent inside
 * a window known only afterwards (the node's start and execution time, on the same clock as
 * Date.now()) can be read off.
 */
function cpuSampler(pids: number[]): { stop(): (from: number, to: number) => number } {
	const read = (): number =>
		pids.length ? pids.reduce((sum, pid) => sum + (procStat(pid)?.cpuMs ?? NaN), 0) : NaN;
	const samples: Array<[number, number]> = [[Date.now(), read()]];
	const timer = setInterval(() => samples.push([Date.now(), read()]), 50);
	return {
		stop() {
			clearInterval(timer);
			samples.push([Date.now(), read()]);
			const at = (t: number): number => {
				const i = samples.findIndex(([time]) => time >= t);
				if (i <= 0) return samples[Math.max(i, 0)][1];
				const [t0, c0] = samples[i - 1];
				const [t1, c1] = samples[i];
				return t1 === t0 ? c1 : c0 + ((c1 - c0) * (t - t0)) / (t1 - t0);
			};
			return (from, to) => at(to) - at(from);
		},
	};
}

function loadAverage(): string {
	return os
		.loadavg()
		.map((l) => l.toFixed(2))
		.join(' / ');
}

async function callWebhook(url: string): Promise<number> {
	const t0 = performance.now();
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
		signal: AbortSignal.timeout(600_000),
	});
	const body = await res.text();
	const ms = performance.now() - t0;
	if (res.status !== 200)
		throw new Error(`webhook ${url} answered ${res.status}: ${body.slice(0, 300)}`);
	return ms;
}

/** Webhook (respond when the last node finishes, no body) → `node`, execution data saved. */
async function createWalkWorkflow(
	stack: Stack,
	name: string,
	path: string,
	node: Record<string, unknown>,
): Promise<{ id: string; url: string }> {
	const workflow = await stack.client.createWorkflow({
		name,
		nodes: [
			{
				id: `${path}-webhook`,
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2.1,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: {
					httpMethod: 'POST',
					path,
					responseMode: 'lastNode',
					responseData: 'noData',
					options: {},
				},
			},
			{ ...node, position: [220, 0] },
		],
		connections: { Webhook: { main: [[{ node: node.name as string, type: 'main', index: 0 }]] } },
		settings: {
			executionOrder: 'v1',
			saveDataSuccessExecution: 'all',
			saveDataErrorExecution: 'all',
			saveExecutionProgress: false,
		},
	});
	await stack.client.activate(workflow.id);
	return { id: workflow.id, url: `${stack.main.url}/webhook/${path}` };
}

/** The workflow's one finished execution (each walk's is deleted once read), waiting for its save. */
async function newFinishedExecution(stack: Stack, workflowId: string) {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const done = (await stack.client.listExecutions({ workflowId })).filter(
			(e) => e.status !== 'running' && e.status !== 'new' && e.status !== 'waiting',
		);
		if (done.length > 1)
			throw new Error(`workflow ${workflowId}: ${done.length} executions, expected one per walk`);
		if (done.length === 1) return done[0];
		if (Date.now() > deadline)
			throw new Error(
				`workflow ${workflowId}: no finished execution 120 s after the webhook answered`,
			);
		await sleep(100);
	}
}

/**
 * One walk through a workflow: the sandbox's request log cleared, the webhook called, then the
 * stored execution read (node time, items) and deleted.
 */
async function walkInN8n(
	stack: Stack,
	control: SandboxClient,
	username: string,
	workflow: { id: string; url: string },
	nodeName: string,
	countRecords: (items: Array<{ json: Record<string, unknown> }>) => number,
	pids: CpuPids,
): Promise<Walk> {
	await control.clearRequests();
	const n8nCpu = cpuSampler(pids.n8n);
	const sandboxCpu = cpuSampler(pids.sandbox);
	let n8nCpuBetween: (from: number, to: number) => number;
	let sandboxCpuBetween: (from: number, to: number) => number;
	let roundTripMs: number;
	try {
		roundTripMs = await callWebhook(workflow.url);
	} finally {
		n8nCpuBetween = n8nCpu.stop();
		sandboxCpuBetween = sandboxCpu.stop();
	}
	const summary = await newFinishedExecution(stack, workflow.id);
	const execution = await stack.client.getExecution(summary.id, true);
	const log = await control.requests({ username });
	await stack.client.api('DELETE', `/executions/${summary.id}`);
	const task = execution.data?.resultData?.runData?.[nodeName]?.[0] as TaskData | undefined;
	if (execution.status !== 'success' || !task || task.error)
		throw new Error(
			`${nodeName}: execution ${summary.id} ${execution.status}: ${JSON.stringify(task?.error ?? execution.data?.resultData?.error ?? {}).slice(0, 300)}`,
		);
	if (typeof task.executionTime !== 'number')
		throw new Error(`${nodeName}: no executionTime in the stored run data`);
	const feedRequests = log.filter((r) => r.path.endsWith('/completions'));
	return {
		nodeMs: task.executionTime,
		nodeCpuMs:
			typeof task.startTime === 'number'
				? n8nCpuBetween(task.startTime, task.startTime + task.executionTime)
				: NaN,
		sandboxCpuMs:
			typeof task.startTime === 'number'
				? sandboxCpuBetween(task.startTime, task.startTime + task.executionTime)
				: NaN,
		executionMs: Date.parse(execution.stoppedAt ?? '') - Date.parse(execution.startedAt),
		roundTripMs,
		records: countRecords(task.data?.main?.[0] ?? []),
		requests: feedRequests.length,
		failedRequests: feedRequests.filter((r) => r.status !== 200).length,
	};
}

export async function run(): Promise<RowResult> {
	const t0 = Date.now();
	const loadAtStart = loadAverage();
	const notes: string[] = [];
	let control: SandboxClient | undefined;
	let rateLimitBefore: number | undefined;
	const agent = new Agent({ keepAliveTimeout: 10_000 });
	try {
		const stack = await realN8n();
		control = await realN8nSandbox();
		const sandboxApi = stack.sandbox!;
		rateLimitBefore = (await control.getConfig()).rateLimitPerMinute;
		await control.setConfig({ rateLimitPerMinute: RATE_LIMIT });
		const { total } = await control.generateFeed(RECORDS);
		progress(`feed-n8n: ${RECORDS} records generated, ${total} in the feed`);

		const grant = await control.issueRefreshToken(`bench-feed-n8n-${process.pid}`);
		const credentialId = `benchFeed${process.pid}`.slice(0, 16);
		await stack.host.importCredentials([sandboxCredential(credentialId, 'Bench feed', grant)]);
		const lp = await createWalkWorkflow(stack, 'bench: feed walk', `bench-feed-${process.pid}`, {
			id: 'bench-lp',
			name: LP_NODE,
			type: 'n8n-nodes-learning-platform.learningPlatform',
			typeVersion: 1,
			parameters: {
				resource: 'completion',
				operation: 'getMany',
				returnAll: true,
				simple: false,
				options: {},
			},
			credentials: { learningPlatformApi: { id: credentialId, name: 'Bench feed' } },
		});
		const countItems = (items: unknown[]) => items.length;

		// warm-up, not counted: the first exchange (stored by n8n), the rate-limit bucket, and a
		// first full walk through n8n's and the node's code paths
		const pids: CpuPids = {
			n8n: withChildren(stack.main.proc?.pid).slice(0, 1),
			sandbox: withChildren(sandboxApi.process.pid),
		};
		const warm = await walkInN8n(stack, control, grant.username, lp, LP_NODE, countItems, pids);
		progress(
			`feed-n8n: warm-up node walk ${warm.records} records, ${warm.requests} requests, ${seconds(warm.nodeMs)}`,
		);
		const apiKey = (await control.auth(grant.username)).api_key;
		if (!apiKey) throw new Error('no API key after the warm-up walk');
		const root = tenancyRoot(sandboxApi.url, sandboxApi.tenancyId);
		const warmBare = await bareFeedLoop(root, apiKey, agent);
		progress(`feed-n8n: warm-up bare loop ${warmBare.records} records, ${seconds(warmBare.ms)}`);

		// n8n's own HTTP Request node on the same pages, for reference
		let http: { id: string; url: string } | undefined;
		let httpError: string | undefined;
		const countPageRecords = (items: Array<{ json: Record<string, unknown> }>) =>
			items.reduce((n, item) => n + ((item.json.data as unknown[] | undefined)?.length ?? 0), 0);
		try {
			http = await createWalkWorkflow(
				stack,
				'bench: feed walk, HTTP Request',
				`bench-feed-http-${process.pid}`,
				{
					id: 'bench-http',
					name: HTTP_NODE,
					type: 'n8n-nodes-base.httpRequest',
					typeVersion: 4.2,
					parameters: {
						method: 'GET',
						url: `${root}/completions`,
						sendQuery: true,
						queryParameters: { parameters: [{ name: 'limit', value: String(FEED_PAGE) }] },
						sendHeaders: true,
						headerParameters: {
							parameters: [
								{ name: 'Authorization', value: `Bearer ${apiKey}` },
								{ name: 'Accept', value: 'application/json' },
							],
						},
						options: {
							pagination: {
								pagination: {
									paginationMode: 'updateAParameterInEachRequest',
									parameters: {
										parameters: [
											{ type: 'qs', name: 'cursor', value: '={{ $response.body.next_cursor }}' },
										],
									},
									paginationCompleteWhen: 'other',
									completeExpression: '={{ $response.body.next_cursor === null }}',
								},
							},
						},
					},
				},
			);
			const warmHttp = await walkInN8n(
				stack,
				control,
				grant.username,
				http,
				HTTP_NODE,
				countPageRecords,
				pids,
			);
			if (warmHttp.records !== warmBare.records)
				throw new Error(
					`HTTP Request node read ${warmHttp.records} records, the bare loop ${warmBare.records}`,
				);
			progress(
				`feed-n8n: warm-up HTTP Request node ${warmHttp.records} records, ${warmHttp.requests} requests, ${seconds(warmHttp.nodeMs)}`,
			);
		} catch (error) {
			httpError = (error as Error)?.message ?? String(error);
			http = undefined;
			progress(`feed-n8n: HTTP Request node reference skipped: ${httpError}`);
		}

		const nodeWalks: Walk[] = [];
		const bareWalks: Array<{
			ms: number;
			records: number;
			requests: number;
			cpuMs: number;
			sandboxCpuMs: number;
		}> = [];
		const httpWalks: Walk[] = [];
		const loads: number[] = [];
		for (let i = 1; i <= RUNS; i++) {
			loads.push(os.loadavg()[0]);
			const walk = await walkInN8n(stack, control, grant.username, lp, LP_NODE, countItems, pids);
			nodeWalks.push(walk);
			progress(
				`feed-n8n: run ${i}/${RUNS}: node ${walk.records} records, ${walk.requests} requests, node ${seconds(walk.nodeMs)}, execution ${seconds(walk.executionMs)}, round trip ${seconds(walk.roundTripMs)}`,
			);
			await control.clearRequests();
			const sandboxCpu = cpuSampler(pids.sandbox);
			const b0 = Date.now();
			const cpu0 = process.cpuUsage();
			const bare = await bareFeedLoop(root, apiKey, agent);
			const cpu1 = process.cpuUsage(cpu0);
			const sandboxCpuMs = sandboxCpu.stop()(b0, Date.now());
			bareWalks.push({ ...bare, cpuMs: (cpu1.user + cpu1.system) / 1000, sandboxCpuMs });
			progress(
				`feed-n8n: run ${i}/${RUNS}: bare loop ${bare.records} records, ${bare.requests} requests, ${seconds(bare.ms)}`,
			);
			if (http) {
				const h = await walkInN8n(
					stack,
					control,
					grant.username,
					http,
					HTTP_NODE,
					countPageRecords,
					pids,
				);
				httpWalks.push(h);
				progress(
					`feed-n8n: run ${i}/${RUNS}: HTTP Request node ${h.records} records, ${h.requests} requests, ${seconds(h.nodeMs)}`,
				);
			}
		}
		const loadAtEnd = loadAverage();

		const records = bareWalks[0].records;
		const expectedRequests = Math.ceil(records / FEED_PAGE);
		const wrongRecords = [...nodeWalks, ...bareWalks].filter((w) => w.records !== records).length;
		const nodeRequests = nodeWalks.map((w) => w.requests);
		const requestsOk = nodeRequests.every((n) => n === expectedRequests);
		const failed = nodeWalks.reduce((n, w) => n + w.failedRequests, 0);
		const best = (ms: number[]) => Math.min(...ms);
		const nodeMs = nodeWalks.map((w) => w.nodeMs);
		const bareMs = bareWalks.map((w) => w.ms);
		const httpMs = httpWalks.map((w) => w.nodeMs);
		const rate = (ms: number) => Math.round((records / ms) * 1000);
		// same records in every walk: the ratio of rates is the inverse ratio of times
		const bestRatio = best(bareMs) / best(nodeMs);
		const medianRatio = median(bareMs) / median(nodeMs);
		const times = (ms: number[]) =>
			`median ${seconds(median(ms))} (runs: ${ms.map((t) => seconds(t)).join(', ')})`;
		const extraPerRequest = (median(nodeMs) - median(bareMs)) / expectedRequests;
		// each node walk ÷ the bare loop right after it: less exposed to load that comes and goes
		const pairedRatios = nodeWalks.map((w, i) => bareWalks[i].ms / w.nodeMs);
		const nodeCpu = median(nodeWalks.map((w) => w.nodeCpuMs));
		const bareCpu = median(bareWalks.map((w) => w.cpuMs));
		const nodeSandboxCpu = median(nodeWalks.map((w) => w.sandboxCpuMs));
		const bareSandboxCpu = median(bareWalks.map((w) => w.sandboxCpuMs));
		// on an idle machine a walk of sequential requests takes about the client's CPU plus the
		// server's; this ratio of CPU sums is what the wall-time ratio would tend to without the load
		const cpuRatio = (bareCpu + bareSandboxCpu) / (nodeCpu + nodeSandboxCpu);

		return {
			id: 'feed-n8n',
			title: TITLE,
			mode: REAL_N8N_MODE,
			settings: {
				recordsGenerated: RECORDS,
				records,
				pageSize: FEED_PAGE,
				runs: RUNS,
				sandboxRateLimitPerMinute: RATE_LIMIT,
				workflow:
					'Webhook (POST, lastNode, noData) → Completion Get Many, Return All, Simplify off, no options',
				saveDataSuccessExecution: 'all',
				walkTime: "the node's executionTime in the stored run data",
			},
			metrics: [
				metric('records per walk (= bare loop)', records, String(records), {
					text: 'all equal',
					pass: wrongRecords === 0,
				}),
				metric(
					`requests per walk ÷ ceil(records/${FEED_PAGE})`,
					nodeRequests.join(', '),
					`${nodeRequests.join(', ')} / ${expectedRequests}`,
					{ text: '1.0', pass: requestsOk },
				),
				metric('failed requests', failed, String(failed), { text: '0', pass: failed === 0 }),
				metric(
					'records/s ÷ bare loop, best ÷ best',
					bestRatio,
					`${fixed(bestRatio, 2)} (${rate(best(nodeMs))} vs ${rate(best(bareMs))} rec/s)`,
					{ text: '≥ 0.8', pass: bestRatio >= 0.8 },
				),
				metric(
					'records/s ÷ bare loop, median ÷ median',
					medianRatio,
					`${fixed(medianRatio, 2)} (${rate(median(nodeMs))} vs ${rate(median(bareMs))} rec/s)`,
				),
				http
					? metric(
							'HTTP Request node ÷ bare loop, best (median)',
							best(bareMs) / best(httpMs),
							`${fixed(best(bareMs) / best(httpMs), 2)} (${fixed(median(bareMs) / median(httpMs), 2)}), ${httpWalks[0].requests} requests, CPU ${seconds(median(httpWalks.map((w) => w.nodeCpuMs)))}`,
						)
					: metric('HTTP Request node ÷ bare loop', null, `skipped: ${httpError}`),
				metric('node walk times', median(nodeMs), times(nodeMs)),
				metric('bare loop times', median(bareMs), times(bareMs)),
				...(http ? [metric('HTTP Request node times', median(httpMs), times(httpMs))] : []),
				metric(
					'paired ratio (each node walk ÷ the bare loop after it)',
					median(pairedRatios),
					`median ${fixed(median(pairedRatios), 2)}, best ${fixed(Math.max(...pairedRatios), 2)} (${pairedRatios.map((r) => fixed(r, 2)).join(', ')})`,
				),
				metric(
					'CPU per walk, client + sandbox: node (n8n) / bare loop (bench), medians',
					Number.isFinite(cpuRatio) ? cpuRatio : null,
					`${seconds(nodeCpu)} + ${seconds(nodeSandboxCpu)} / ${seconds(bareCpu)} + ${seconds(bareSandboxCpu)} (bare ÷ node ${fixed(cpuRatio, 2)})`,
				),
				metric(
					'node time over bare, per request (median)',
					extraPerRequest,
					`${fixed(extraPerRequest, 1)} ms`,
				),
				metric(
					'execution / webhook round trip (median)',
					median(nodeWalks.map((w) => w.executionMs)),
					`${seconds(median(nodeWalks.map((w) => w.executionMs)))} / ${seconds(median(nodeWalks.map((w) => w.roundTripMs)))} (node ${seconds(median(nodeMs))})`,
				),
				metric('load average (1/5/15 min)', loadAtStart, `${loadAtStart} → ${loadAtEnd}`),
			],
			notes: [
				`walk time: the node's executionTime from the stored execution (n8n's clock around the node's execute()); the bare loop: performance.now() around the loop in the bench process (Node ${process.version}; n8n runs on Node 24)`,
				`${RUNS} runs, alternating node walk, bare loop${http ? ', HTTP Request node' : ''}, after one warm-up of each; 1-minute load at each run's start: ${loads.map((l) => l.toFixed(2)).join(', ')}`,
				"CPU: the n8n main process's user + system time (/proc, sampled every 50 ms) inside the node's start and execution time; the bench process's process.cpuUsage() around the bare loop. The sandbox's CPU (tsx and its node child) in the same windows. A walk is sequential requests, so on an idle machine its wall time is about client CPU + sandbox CPU: the CPU ratio is what the records/s ratio tends to without other load",
				'execution data saved (saveDataSuccessExecution all) so that the node time can be read; each execution is deleted once read. The webhook answers with no body, so the items are not sent back',
				"bare loop: undici, limit=500, cursor followed until next_cursor is null, JSON parsed, every record kept; the same API user and API key as the node's credential",
				http
					? "HTTP Request node: typeVersion 4.2, limit=500 in the query, pagination 'Update a Parameter in Each Request' (cursor = $response.body.next_cursor) until next_cursor is null, API key in an Authorization header; it outputs one item per page (not one per record)"
					: `HTTP Request node reference skipped: ${httpError}`,
				`sandbox rate limit raised to ${RATE_LIMIT}/min for this row, ${rateLimitBefore}/min restored afterwards`,
				...notes,
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'feed-n8n', title: TITLE, mode: REAL_N8N_MODE, notes }, t0, error);
	} finally {
		await agent.close();
		if (control && rateLimitBefore !== undefined)
			await control
				.setConfig({ rateLimitPerMinute: rateLimitBefore })
				.catch((error: unknown) =>
					progress(`feed-n8n: restoring the rate limit failed: ${(error as Error)?.message}`),
				);
	}
}
