/**
 * Row 4, webhook trigger: 500 signed deliveries from the sandbox into the Learning Platform
 * Trigger.
 *
 * Default: a real n8n 2.40.7 (scripts/n8n: the packed package installed as a community package,
 * n8n behind the TLS front, the sandbox API trusting its CA). The workflow is only the trigger; its
 * activation registers the subscription (HMAC signing key + bearer token). The bench then has the
 * sandbox fire 500 `Completion_created` events, keeping at most IN_FLIGHT deliveries pending (a
 * closed loop on the sandbox's pending count); the sandbox delivers them (undici, 5 s time-out, up
 * to 3 attempts) to https://127.0.0.1:<front>/webhook/<id>/webhook.
 *
 * With --trigger-in-process (or when the real n8n cannot start) the same deliveries go to an https
 * server in the bench process that hands each request to the node's `webhook()` through n8n-core's
 * WebhookContext (test/support/n8n.ts runWebhook): no n8n webhook server, no executions stored.
 *
 * - accepted: deliveries whose last attempt was answered 2xx; rejected: answered 4xx (for
 *   correctly signed deliveries, target 0); lost: events with no execution (target 0); duplicates:
 *   executions beyond one per event (a retry the trigger did not recognise);
 * - forged: 50 deliveries with the right bearer token and a wrong signature, sent by the bench
 *   straight to the webhook URL: all must be rejected (401) and start nothing;
 * - deliveries/s: events ÷ time from the first event fired to the last delivery answered;
 * - p50/p99 latency: the sandbox's response_time_ms of the accepted attempts (time until n8n answered);
 * - signature check: `verifyDelivery` (signature.ts) timed alone on a real delivery, per call, and
 *   as a share of the p50 latency.
 */
import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { verifyDelivery } from '../../nodes/LearningPlatformTrigger/deliveries/signature';
import type { DeliveryAttempt, SandboxClient, SubscriptionState } from '../../sandbox/client';
import { nodeOutput, type N8nClient } from '../../scripts/n8n/client';
import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import type { Stack } from '../../scripts/n8n/stack';
import { makeCertificates } from '../../scripts/n8n/tls-front';
import { runHook, runWebhook } from '../../test/support/n8n';
import type { RowOptions } from '../run';
import {
	errorText,
	failedResult,
	fixed,
	metric,
	newApiUser,
	percentile,
	progress,
	seconds,
	sleep,
	startBenchSandbox,
	type Metric,
	type RowResult,
} from '../lib/common';
import { LearningPlatformTrigger } from '../lib/nodes';
import { benchCompletionPayload } from '../lib/payload';
import { REAL_N8N_MODE, realN8n, realN8nSandbox } from '../lib/realN8n';

const EVENTS = 500;
const FORGED = 50;
const EVENT = 'Events\\Courses\\Completion_created';
const TRIGGER_NAME = 'Learning Platform Trigger';
const FORGED_SEQ_BASE = 1_000_000;
/** deliveries scheduled or in flight at most (the bench waits before firing the next event) */
const IN_FLIGHT = 8;

/** What receives the deliveries: a real n8n, or the node's webhook() in this process. */
interface Receiver {
	mode: string;
	control: SandboxClient;
	username: string;
	/** the subscription registered by the trigger's activation */
	subscription: SubscriptionState;
	/** CA to trust when the bench itself posts to the webhook URL */
	ca: string;
	/** `bench_seq` of every execution started so far (waits until `expected` or quiet) */
	executedSeqs(expected: number): Promise<number[]>;
	/** ms from start to stop of each stored execution (real n8n only) */
	executionDurations?: number[];
	/** facts about the receiver worth printing (e.g. n8n's database time-outs) */
	diagnostics(): string[];
	close(): Promise<void>;
}

function payload(seq: number): IDataObject {
	return benchCompletionPayload(seq, 500_000);
}

// ------------------------------------------------------------------------------------------
// Real n8n

async function realN8nReceiver(): Promise<Receiver> {
	const stack: Stack = await realN8n();
	const control = await realN8nSandbox();
	const grant = await control.issueRefreshToken(`bench-trigger-${process.pid}`);
	const credentialId = `benchTrig${process.pid}`.slice(0, 16);
	await stack.host.importCredentials([sandboxCredential(credentialId, 'Bench trigger', grant)]);
	const client: N8nClient = stack.client;
	const workflow = await client.createWorkflow({
		name: 'bench: webhook trigger',
		nodes: [
			{
				id: 'bench-trigger-node',
				name: TRIGGER_NAME,
				type: 'n8n-nodes-learning-platform.learningPlatformTrigger',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'b7c1e2d3-0000-4000-8000-00000000b001',
				parameters: { event: EVENT },
				credentials: { learningPlatformApi: { id: credentialId, name: 'Bench trigger' } },
			},
		],
		connections: {},
	});
	await client.activate(workflow.id);
	const subscription = (await control.subscriptions(grant.username)).find(
		(s) => s.deleted_at === null,
	);
	if (!subscription) throw new Error('the activation registered no subscription');
	progress(
		`trigger: real n8n up, workflow ${workflow.id} active, subscription ${subscription.id} → ${subscription.url}`,
	);

	const receiver: Receiver = {
		mode: `${REAL_N8N_MODE}, webhooks through the TLS front`,
		control,
		username: grant.username,
		subscription,
		ca: stack.certificates.caCertPem,
		async executedSeqs(expected) {
			// n8n answers a delivery before the execution is stored: wait until the count settles
			let last = -1;
			let stableSince = Date.now();
			const deadline = Date.now() + 240_000;
			for (;;) {
				const count = (await client.listExecutions({ workflowId: workflow.id })).filter(
					(e) => e.status !== 'running' && e.status !== 'new',
				).length;
				if (count !== last) {
					last = count;
					stableSince = Date.now();
				}
				if (count >= expected || Date.now() - stableSince > 10_000 || Date.now() > deadline) break;
				await sleep(1000);
			}
			const executions = await client.listExecutions({
				workflowId: workflow.id,
				includeData: true,
			});
			receiver.executionDurations = executions
				.filter((e) => e.stoppedAt)
				.map((e) => Date.parse(String(e.stoppedAt)) - Date.parse(e.startedAt))
				.filter(Number.isFinite);
			return executions.map((e) =>
				Number((nodeOutput(e, TRIGGER_NAME)[0]?.payload as IDataObject | undefined)?.bench_seq),
			);
		},
		diagnostics() {
			const dbTimeouts = stack.main.logLines(
				/Database ping failed|Database connection timed out/,
			).length;
			const stats = stack.main.logLines(/Failed to record workflow statistic/).length;
			return [
				`n8n's log: ${dbTimeouts} "Database ping failed" lines, ${stats} "Failed to record workflow statistic" lines (SQLite, n8n's default database)`,
			];
		},
		async close() {
			await client.deactivate(workflow.id).catch(() => undefined);
		},
	};
	return receiver;
}

// ------------------------------------------------------------------------------------------
// In-process: https server → node.webhook() through n8n-core's WebhookContext

async function inProcessReceiver(): Promise<Receiver> {
	const certificates = await makeCertificates(
		fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-tls-')),
	);
	const sandbox = await startBenchSandbox({
		rateLimitPerMinute: 600,
		demo: true,
		trustCaFile: certificates.caCertFile,
		logName: 'trigger',
	});
	const { username, credentials } = await newApiUser(sandbox, 'trigger');
	const trigger = new LearningPlatformTrigger();
	const staticData: IDataObject = {};
	const parameters = { event: EVENT };
	const seqs: number[] = [];

	const server = https.createServer(
		{ key: certificates.keyPem, cert: certificates.certPem },
		(req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				const headers: Record<string, string> = {};
				for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
				runWebhook(trigger, {
					parameters,
					credentials,
					staticData,
					headers,
					rawBody: Buffer.concat(chunks),
				})
					.then(({ webhookResponse, response }) => {
						if (webhookResponse.workflowData) {
							const json = webhookResponse.workflowData[0]?.[0]?.json as IDataObject | undefined;
							seqs.push(Number((json?.payload as IDataObject | undefined)?.bench_seq));
							res
								.writeHead(200, { 'content-type': 'application/json' })
								.end('{"message":"Workflow was started"}');
						} else {
							res
								.writeHead(response.statusCode, { 'content-type': 'application/json' })
								.end(response.body);
						}
					})
					.catch((error: unknown) => res.writeHead(500).end(String(error)));
			});
		},
	);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;
	await runHook(trigger, 'create', {
		parameters,
		credentials,
		staticData,
		webhookBaseUrl: `https://127.0.0.1:${port}/webhook`,
	});
	const subscription = (await sandbox.control.subscriptions(username)).find(
		(s) => s.deleted_at === null,
	);
	if (!subscription) throw new Error('the activation registered no subscription');
	return {
		mode: 'in-process (n8n-core WebhookContext behind an https server in the bench process, no n8n)',
		control: sandbox.control,
		username,
		subscription,
		ca: certificates.caCertPem,
		async executedSeqs() {
			return [...seqs];
		},
		diagnostics() {
			return [
				"no n8n webhook server, no execution stored: the figures are the node's webhook() and n8n-core's WebhookContext only",
			];
		},
		async close() {
			await new Promise<void>((resolve) => server.close(() => resolve()));
			server.closeAllConnections();
			await sandbox.stop();
		},
	};
}

// ------------------------------------------------------------------------------------------

function post(
	url: string,
	body: string,
	headers: Record<string, string>,
	ca: string,
): Promise<number> {
	return new Promise((resolve, reject) => {
		const request = https.request(
			url,
			{
				method: 'POST',
				headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
				ca,
			},
			(res) => {
				res.resume();
				res.on('end', () => resolve(res.statusCode ?? 0));
			},
		);
		request.on('error', reject);
		request.end(body);
	});
}

/** ns per call of verifyDelivery on a real delivery (valid signature: the full check). */
function signatureCost(
	attempt: DeliveryAttempt,
	subscription: SubscriptionState,
): { nsPerCall: number; valid: boolean } {
	const rawBody = Buffer.from(attempt.body, 'utf8');
	const delivery = {
		rawBody,
		authorization: attempt.headers.authorization,
		signature: attempt.headers['x-signature'],
	};
	const secrets = {
		signingKey: subscription.signing_key ?? '',
		authToken: subscription.auth_token ?? '',
	};
	let valid = true;
	for (let i = 0; i < 20_000; i++) valid = verifyDelivery(delivery, secrets).valid && valid;
	const runs: number[] = [];
	for (let r = 0; r < 5; r++) {
		const n = 50_000;
		const t0 = process.hrtime.bigint();
		for (let i = 0; i < n; i++) valid = verifyDelivery(delivery, secrets).valid && valid;
		runs.push(Number(process.hrtime.bigint() - t0) / n);
	}
	return { nsPerCall: Math.min(...runs), valid };
}

export async function run(options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Trigger: ${EVENTS} signed deliveries through the webhook trigger`;
	let receiver: Receiver | undefined;
	const notes: string[] = [];
	try {
		if (options.triggerInProcess) {
			receiver = await inProcessReceiver();
		} else {
			try {
				receiver = await realN8nReceiver();
			} catch (error) {
				notes.push(
					`real n8n could not be used (${errorText(error).split('\n')[0].slice(0, 300)}): measured in-process instead`,
				);
				progress(
					`trigger: real n8n failed (${errorText(error).split('\n')[0]}); falling back to in-process`,
				);
				receiver = await inProcessReceiver();
			}
		}
		const { control, subscription } = receiver;

		// 500 events as fast as the control API takes them; the sandbox delivers concurrently
		progress(`trigger: firing ${EVENTS} events ...`);
		const fired = performance.now();
		// at most IN_FLIGHT deliveries scheduled or in flight at any time (closed loop on the sandbox's
		// pending count): the sustained rate at a bounded concurrency, not a 500-connection burst
		let maxPending = 0;
		for (let seq = 0; seq < EVENTS; seq++) {
			for (;;) {
				const { pending } = await control.pendingDeliveries();
				maxPending = Math.max(maxPending, pending);
				if (pending < IN_FLIGHT) break;
				await sleep(10);
			}
			await control.simulateEvent(EVENT, payload(seq)).catch((error: unknown) => {
				throw new Error(`firing event ${seq}: ${errorText(error)}`);
			});
			if ((seq + 1) % 100 === 0) progress(`trigger: ${seq + 1} events fired`);
		}
		const firedMs = performance.now() - fired;
		let attempts: DeliveryAttempt[] = [];
		const deadline = Date.now() + 180_000;
		for (;;) {
			const { pending } = await control.pendingDeliveries().catch((error: unknown) => {
				throw new Error(`reading pending deliveries: ${errorText(error)}`);
			});
			attempts = await control
				.deliveries({ subscriptionId: subscription.id })
				.catch((error: unknown) => {
					throw new Error(`reading deliveries: ${errorText(error)}`);
				});
			if ((pending === 0 && attempts.length >= EVENTS) || Date.now() > deadline) break;
			await sleep(50);
		}
		const doneMs = performance.now() - fired;
		progress(
			`trigger: ${attempts.length} attempts answered ${seconds(doneMs)} after the first event (fired in ${seconds(firedMs)})`,
		);

		// per event (delivery log entry): the last attempt decides
		const byLog = new Map<number, DeliveryAttempt[]>();
		for (const a of attempts) byLog.set(a.log_id ?? -1, [...(byLog.get(a.log_id ?? -1) ?? []), a]);
		const last = [...byLog.values()].map((list) =>
			list.reduce((x, y) => (y.attempt > x.attempt ? y : x)),
		);
		const ok = (a: DeliveryAttempt) =>
			a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
		const accepted = last.filter(ok).length;
		const rejected = last.filter(
			(a) => a.status_code !== null && a.status_code >= 400 && a.status_code < 500,
		).length;
		const failedOther = last.length - accepted - rejected;
		const retriedAttempts = attempts.filter((a) => a.attempt > 1).length;
		const timeouts = attempts.filter((a) => a.status_code === null).length;
		// Retries of an accepted delivery that the trigger recognised (answered 2xx, no execution).
		const repeatsIgnored = attempts.filter(
			(a) => ok(a) && (a.response ?? '').includes('"repeated":true'),
		).length;
		const latencies = attempts
			.filter(ok)
			.map((a) => a.response_time_ms ?? NaN)
			.filter(Number.isFinite);
		const p50 = percentile(latencies, 50);
		const p99 = percentile(latencies, 99);
		const perSecond = accepted / (doneMs / 1000);

		// forged deliveries: right bearer, wrong signature
		progress(`trigger: ${FORGED} forged deliveries ...`);
		const forgedStatuses: number[] = [];
		for (let i = 0; i < FORGED; i++) {
			const body = JSON.stringify({
				event: EVENT,
				payload: payload(FORGED_SEQ_BASE + i),
				now: Math.floor(Date.now() / 1000),
				delivery_id: '',
				api_version: '2.0',
			});
			const signature = createHmac('sha256', 'not-the-signing-key').update(body).digest('hex');
			forgedStatuses.push(
				await post(
					subscription.url,
					body,
					{
						'content-type': 'application/json',
						authorization: `Bearer ${subscription.auth_token}`,
						'x-signature': signature,
					},
					receiver.ca,
				).catch(() => 0),
			);
		}
		const forgedRejected = forgedStatuses.filter((s) => s === 401 || s === 403).length;

		// executions
		progress('trigger: waiting for the executions ...');
		const seqs = await receiver.executedSeqs(accepted);
		const genuine = seqs.filter((s) => Number.isInteger(s) && s >= 0 && s < EVENTS);
		const unique = new Set(genuine);
		const lost = EVENTS - unique.size;
		const duplicates = genuine.length - unique.size;
		const forgedExecuted = seqs.filter((s) => s >= FORGED_SEQ_BASE).length;
		progress(
			`trigger: ${seqs.length} executions, ${unique.size} distinct events, lost ${lost}, duplicates ${duplicates}`,
		);

		// signature check alone
		const sample = attempts.find(ok) ?? attempts[0];
		const cost = sample ? signatureCost(sample, subscription) : { nsPerCall: NaN, valid: false };

		const metrics: Metric[] = [
			metric('accepted (2xx answer to the sender)', accepted, `${accepted}/${EVENTS}`, {
				text: `${EVENTS}`,
				pass: accepted === EVENTS,
			}),
			metric('rejected (4xx), correctly signed', rejected, String(rejected), {
				text: '0',
				pass: rejected === 0,
			}),
			metric('lost (no execution)', lost, String(lost), { text: '0', pass: lost === 0 }),
			metric('duplicate executions', duplicates, String(duplicates), {
				text: '0',
				pass: duplicates === 0,
			}),
			metric(
				'forged (wrong signature) rejected',
				forgedRejected,
				`${forgedRejected}/${FORGED}, ${forgedExecuted} executed`,
				{
					text: `${FORGED}, 0 executed`,
					pass: forgedRejected === FORGED && forgedExecuted === 0,
				},
			),
			metric(
				'deliveries/s',
				perSecond,
				`${fixed(perSecond, 1)} (${accepted} in ${seconds(doneMs, 1)})`,
			),
			metric('latency p50 / p99', p50, `${p50} ms / ${p99} ms`),
			metric(
				'attempts: retries / time-outs / other failures',
				retriedAttempts,
				`${retriedAttempts} / ${timeouts} / ${failedOther}`,
			),
			metric(
				'retries recognised as repeats (answered 2xx, no execution)',
				repeatsIgnored,
				String(repeatsIgnored),
			),
			...(receiver.executionDurations?.length
				? [
						metric(
							'n8n execution time p50 / p99 (started → stopped)',
							percentile(receiver.executionDurations, 50),
							`${percentile(receiver.executionDurations, 50)} ms / ${percentile(receiver.executionDurations, 99)} ms`,
						),
					]
				: []),
			metric(
				'signature check per delivery',
				cost.nsPerCall,
				`${fixed(cost.nsPerCall / 1000, 1)} µs (${((cost.nsPerCall / 1e6 / p50) * 100).toPrecision(2)} % of p50)${cost.valid ? '' : ' INVALID SAMPLE'}`,
			),
		];
		return {
			id: 'trigger',
			title,
			mode: receiver.mode,
			settings: {
				events: EVENTS,
				forged: FORGED,
				event: EVENT,
				inFlight: IN_FLIGHT,
				delivery: 'sandbox: concurrent, 5 s time-out, 3 attempts, backoff 200 ms doubling',
			},
			metrics,
			notes: [
				...notes,
				`${EVENTS} events fired through the sandbox control API with at most ${IN_FLIGHT} deliveries pending at a time (closed loop; max seen ${maxPending}) in ${seconds(firedMs, 1)}`,
				'signature check: verifyDelivery (bearer + HMAC-SHA256 over the raw body) on a real delivery, best of 5 × 50,000 calls',
				'a delivery that timed out (5 s) is retried with identical bytes (same `now`, empty delivery_id); the trigger (Ignore Repeated Deliveries, on by default) acknowledges a retry of an attempt n8n accepted without a second execution, so duplicates count only what slipped through',
				...receiver.diagnostics(),
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'trigger', title, mode: receiver?.mode ?? '', notes }, t0, error);
	} finally {
		await receiver?.close().catch(() => undefined);
	}
}
