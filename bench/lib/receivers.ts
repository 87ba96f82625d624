/**
 * The three receivers rows 4b, 4c and 4d compare, and what those rows share: the subscriptions
 * (each receiver's own API user and event, with a signing key and a token), the workflows, the
 * delivery generator (a closed loop through the sandbox's control API), and the counting (lost,
 * duplicates, rates, latencies) from the sandbox's delivery log and n8n's stored executions.
 *
 * - T: Learning Platform Trigger (defaults) → No-Op, `Completion_created`;
 * - W: n8n's Webhook node (POST, answers when received, like the trigger) → No-Op, `Completion_updated`;
 * - C: the hand-built chain (bench/workflows/hand-built-chain.json), `Completion_archived`.
 * Bodies are the same but for the event name: `{event, payload: {bench_phase, bench_seq,
 * completion}, now, delivery_id, api_version}`.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { request } from 'undici';

import type { DeliveryAttempt, SandboxClient } from '../../sandbox/client';
import { nodeOutput, type ExecutionSummary, type N8nClient } from '../../scripts/n8n/client';
import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import type { Stack } from '../../scripts/n8n/stack';
import { percentile, sleep } from './common';
import { benchCompletionPayload } from './payload';

export const TRIGGER_NODE = 'Trigger';
export const WEBHOOK_NODE = 'Webhook';
/** the hand-built chain's last node (bench/workflows/hand-built-chain.json): a completion that reached it was handed on */
export const CHAIN_LAST_NODE = 'HR step';
export const CHAIN_WORKFLOW_FILE = path.join(__dirname, '..', 'workflows', 'hand-built-chain.json');

export const RECEIVERS = ['trigger', 'webhook', 'chain'] as const;
export type Receiver = (typeof RECEIVERS)[number];
export const RECEIVER_NAMES: Record<Receiver, string> = {
	trigger: 'trigger',
	webhook: 'Webhook node',
	chain: 'hand-built chain',
};
/** Each receiver is subscribed to its own event, so one simulated event reaches one receiver. */
export const EVENT_OF: Record<Receiver, string> = {
	trigger: 'Events\\Courses\\Completion_created',
	webhook: 'Events\\Courses\\Completion_updated',
	chain: 'Events\\Courses\\Completion_archived',
};

export function payload(phase: number, seq: number) {
	return benchCompletionPayload(seq, 700_000, { bench_phase: phase });
}

export const seqOf = (body: string): number =>
	Number((JSON.parse(body) as { payload?: { bench_seq?: number } }).payload?.bench_seq);
export const sentAt = (a: DeliveryAttempt) => Date.parse(a.sent_at);
export const answeredAt = (a: DeliveryAttempt) => sentAt(a) + (a.response_time_ms ?? 0);
export const ok = (a: DeliveryAttempt) =>
	a.status_code !== null && a.status_code >= 200 && a.status_code < 300;

/** utime + stime in ms (every thread: isolated-vm's too) and the parent pid, from /proc/<pid>/stat. */
export function procStat(pid: number): { cpuMs: number; ppid: number } | undefined {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		// after the name: state, ppid, ..., utime and stime (ticks of 10 ms) as the 12th and 13th
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, ppid: Number(fields[1]) };
	} catch {
		return undefined;
	}
}

/** Every pid in /proc (empty without /proc). */
export function allPids(): number[] {
	try {
		return fs
			.readdirSync('/proc')
			.filter((name) => /^\d+$/.test(name))
			.map(Number);
	} catch {
		return [];
	}
}

/** Peak resident memory (VmHWM) of a process in MiB, from /proc/<pid>/status; NaN without it. */
export function peakRssMiB(pid: number): number {
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
export async function subscribe(
	sandbox: { url: string; tenancyId: string },
	control: SandboxClient,
	event: string,
	url: string,
): Promise<{ id: number; signingKey: string; authToken: string }> {
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
export async function workflow(
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

/** "Learning Platform Trigger (defaults) → No-Op" on `event`, active: its activation subscribes. */
export function triggerWorkflow(
	client: N8nClient,
	name: string,
	credential: { id: string; name: string },
	event: string,
): Promise<string> {
	// at its defaults, as a node is added (recovery of missed deliveries on)
	return workflow(client, name, {
		name: TRIGGER_NODE,
		type: 'n8n-nodes-learning-platform.learningPlatformTrigger',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { event },
		credentials: { learningPlatformApi: credential },
	});
}

/** The workflow file a user would build without the package, with its placeholders filled in, active. */
export async function chainWorkflow(
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

export interface Receivers {
	workflowOf: Record<Receiver, string>;
	subscriptionOf: Record<Receiver, number>;
	/** credentials imported for triggers added later (`extraTriggers`), each its own API user */
	extraTriggerCredentials: Array<{ id: string; name: string }>;
}

/**
 * The three receivers on `stack`, each active and subscribed: credentials imported (one
 * `n8n import:credentials`, with `extraTriggers` more trigger credentials for later), workflows
 * created and activated, the Webhook node's and the chain's subscriptions made by the bench.
 */
export async function setUpReceivers(
	stack: Stack,
	control: SandboxClient,
	options: { label: string; extraTriggers?: number },
): Promise<Receivers> {
	const { client } = stack;
	const sandbox = stack.sandbox!;
	const grant = await control.issueRefreshToken(`bench-${options.label}-trigger-${process.pid}`);
	const credentialId = `benchScale${process.pid}`.slice(0, 16);
	const chainCredentialId = `benchChain${process.pid}`.slice(0, 16);
	const chainCryptoCredentialId = `benchHmac${process.pid}`.slice(0, 16);
	const chainPath = `bench-chain-${process.pid}`;
	const webhookPath = `bench-scale-${process.pid}`;
	const chainSubscription = await subscribe(
		sandbox,
		control,
		EVENT_OF.chain,
		`${stack.webhookBaseUrl}webhook/${chainPath}`,
	);
	const extraTriggerCredentials: Array<{ id: string; name: string }> = [];
	const extraImports = [];
	for (let i = 0; i < (options.extraTriggers ?? 0); i++) {
		const extraGrant = await control.issueRefreshToken(
			`bench-${options.label}-trigger${i + 2}-${process.pid}`,
		);
		const credential = { id: `benchT${i + 2}${process.pid}`.slice(0, 16), name: `Bench T${i + 2}` };
		extraTriggerCredentials.push(credential);
		extraImports.push(sandboxCredential(credential.id, credential.name, extraGrant));
	}
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
		...extraImports,
	]);
	const workflowOf: Record<Receiver, string> = {
		trigger: await triggerWorkflow(
			client,
			'bench: trigger at scale',
			{ id: credentialId, name: 'Bench scale' },
			EVENT_OF.trigger,
		),
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
		sandbox,
		control,
		EVENT_OF.webhook,
		`${stack.webhookBaseUrl}webhook/${webhookPath}`,
	);
	return {
		workflowOf,
		subscriptionOf: {
			trigger: triggerSubscription.id,
			webhook: webhookSubscription.id,
			chain: chainSubscription.id,
		},
		extraTriggerCredentials,
	};
}

/** What firing one phase's events gave: its deliveries' attempts and the time to the last answer. */
export interface FiredPhase {
	seqs: number[];
	/** the attempts of this phase's deliveries (of every subscription in `subscriptionIds`) */
	attempts: DeliveryAttempt[];
	/** the first attempt's send time (ms) */
	firstSend: number;
	/** first send → last answer */
	answeredMs: number;
}

/**
 * Fires `count` events of `event` (sequence numbers from `firstSeq`) through the control API,
 * keeping at most `inFlight` deliveries pending (a closed loop), and waits until every delivery
 * to the subscriptions `subscriptionIds` has its last answer (`count` deliveries each).
 */
export async function fireEvents(
	control: SandboxClient,
	options: {
		event: string;
		phase: number;
		firstSeq: number;
		count: number;
		inFlight: number;
		subscriptionIds: number[];
	},
): Promise<FiredPhase> {
	const { event, phase, firstSeq, count, inFlight, subscriptionIds } = options;
	const seqs: number[] = [];
	for (let i = 0; i < count; i++) {
		while ((await control.pendingDeliveries()).pending >= inFlight) await sleep(5);
		const seq = firstSeq + i;
		seqs.push(seq);
		await control.simulateEvent(event, payload(phase, seq));
	}
	const wanted = new Set(seqs);
	const deadline = Date.now() + 600_000;
	let attempts: DeliveryAttempt[] = [];
	for (;;) {
		const { pending } = await control.pendingDeliveries();
		attempts = [];
		for (const subscriptionId of subscriptionIds)
			attempts.push(
				...(await control.deliveries({ subscriptionId })).filter((a) => wanted.has(seqOf(a.body))),
			);
		if (
			(pending === 0 &&
				new Set(attempts.map((a) => a.log_id)).size >= count * subscriptionIds.length) ||
			Date.now() > deadline
		)
			break;
		await sleep(200);
	}
	const firstSend = Math.min(...attempts.map(sentAt));
	const answeredMs = Math.max(...attempts.map(answeredAt)) - firstSend;
	return { seqs, attempts, firstSend, answeredMs };
}

/** A measured phase: what `fireEvents` gave and the time until its executions had finished. */
export interface PhaseTimes {
	receiver: Receiver;
	seqs: number[];
	attempts: DeliveryAttempt[];
	/** first send → last answer */
	answeredMs: number;
	/** first send → the last of the phase's executions finished */
	processedMs: number;
}

export interface DeliveryFigures {
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
}

/** Rates, lost, duplicates, latencies and attempts of one receiver's phases. */
export function deliveryFigures(
	phases: PhaseTimes[],
	executions: ExecutionSummary[],
	seqOfExecution: (e: ExecutionSummary) => number,
): DeliveryFigures {
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
	const totalSeconds = (ms: (p: PhaseTimes) => number) =>
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
	};
}

const bodySeq = (item: Record<string, unknown> | undefined) =>
	Number((item?.body as { payload?: { bench_seq?: number } } | undefined)?.payload?.bench_seq);

/**
 * The delivery (bench_seq) an execution handed on: the trigger's output, the Webhook node's body,
 * the body that reached the chain's last node (executions the IF or Remove Duplicates stopped
 * give NaN: they handed nothing on).
 */
export const SEQ_OF_EXECUTION: Record<Receiver, (e: ExecutionSummary) => number> = {
	trigger: (e) =>
		Number(
			(nodeOutput(e, TRIGGER_NODE)[0]?.payload as { bench_seq?: number } | undefined)?.bench_seq,
		),
	webhook: (e) => bodySeq(nodeOutput(e, WEBHOOK_NODE)[0]),
	chain: (e) =>
		e.data?.resultData?.runData?.[CHAIN_LAST_NODE] ? bodySeq(nodeOutput(e, WEBHOOK_NODE)[0]) : NaN,
};

/** The delivery an execution received (stopped or not): for the chain, its Webhook node's body. */
export const SEQ_RECEIVED: Record<Receiver, (e: ExecutionSummary) => number> = {
	trigger: SEQ_OF_EXECUTION.trigger,
	webhook: SEQ_OF_EXECUTION.webhook,
	chain: (e) => bodySeq(nodeOutput(e, WEBHOOK_NODE)[0]),
};
