/**
 * What measuring recovery's cost needs, for tests and the bench (row 4e) alike: an https n8n of
 * its own that runs the trigger's webhook in this process and drops every connection while the
 * platform cannot reach it (a firewall) or n8n is down; n8n's clock and the platform's moved
 * together, the schedule's 15-minute checks released one at a time; and the trigger's recovery
 * requests as the platform logged them.
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IDataObject, INodeType } from 'n8n-workflow';

import { RESCAN_INTERVAL_MS } from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { recoveryOf } from '../../nodes/LearningPlatformTrigger/recovery/scopeRecovery';
import { clock, useClock } from '../../nodes/shared/transport/clock';
import type { SandboxClient } from '../../sandbox/client';
import { AheadClock } from './fakeClock';
import { busiestWindow } from './busiestWindow';
import { runHook, runWebhook, type CredentialStore } from './n8n';

export const NODE_KEY = 'node:Learning Platform Trigger';
export const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
export const RECOVERING = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: true } };

/**
 * One completion event: the completion's id and when it completed (the sandbox completes one
 * course of a learner again under the same id, later).
 */
export const completionKey = (id: number, completedAt: string) =>
	`${id}@${Date.parse(completedAt)}`;

/**
 * An n8n that runs one trigger workflow: its static data as n8n's database holds it, and the
 * executions started, per completion (completionKey), with when (n8n's clock) the first and last
 * started.
 */
export class RecoveringN8n {
	url = '';
	/** false: every connection is dropped before anything is read */
	reachable = false;
	readonly database: IDataObject = {};
	readonly executions = new Map<string, number>();
	/** when (n8n's clock) each completion's first execution started */
	readonly firstRunAt = new Map<string, number>();
	firstExecutionAt = Infinity;
	lastExecutionAt = 0;
	/** deliveries acknowledged as repeats (the sandbox may complete one course twice alike) */
	repeats = 0;
	private server?: Server;
	private webhookBaseUrl = '';

	constructor(
		private readonly trigger: INodeType,
		private credentials: CredentialStore,
	) {}

	async listen(certificates: { keyPem: string; certPem: string }): Promise<void> {
		const server = createHttpsServer(
			{ key: certificates.keyPem, cert: certificates.certPem },
			(req, res) => {
				if (!this.reachable) {
					req.socket.destroy();
					return;
				}
				const chunks: Buffer[] = [];
				req.on('data', (chunk: Buffer) => chunks.push(chunk));
				req.on('end', () => {
					const headers = Object.fromEntries(
						Object.entries(req.headers).map(([k, v]) => [k, String(v)]),
					);
					void this.deliver(headers, Buffer.concat(chunks)).then(({ statusCode, body }) => {
						res.writeHead(statusCode, { 'content-type': 'application/json' });
						res.end(body || '{}');
					});
				});
			},
		);
		this.server = server;
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		this.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
	}

	private async deliver(headers: Record<string, string>, rawBody: Buffer) {
		const run = await runWebhook(this.trigger, {
			parameters: RECOVERING,
			credentials: this.credentials,
			staticData: this.database,
			webhookBaseUrl: this.webhookBaseUrl,
			headers,
			rawBody,
		});
		if (run.response.body.includes('"repeated":true')) this.repeats++;
		if (run.webhookResponse.workflowData) {
			const { payload } = JSON.parse(rawBody.toString()) as {
				payload: { completion: { id: number; time_completed: string } };
			};
			const id = completionKey(payload.completion.id, payload.completion.time_completed);
			const at = clock().now();
			this.executions.set(id, (this.executions.get(id) ?? 0) + 1);
			if (!this.firstRunAt.has(id)) this.firstRunAt.set(id, at);
			this.lastExecutionAt = at;
			this.firstExecutionAt = Math.min(this.firstExecutionAt, at);
		}
		return run.response;
	}

	/**
	 * The workflow, nothing in memory and an empty database, whose trigger has just subscribed at
	 * `path` with `parameters` (recovery off unless they turn it on), n8n reachable. The caller
	 * resets the trigger's recovery state.
	 */
	async subscribe(
		path: string,
		parameters: IDataObject = {
			event: COMPLETION_CREATED,
			options: { recoverMissedDeliveries: false },
		},
		credentials = this.credentials,
	) {
		for (const key of Object.keys(this.database)) delete this.database[key];
		this.executions.clear();
		this.firstRunAt.clear();
		this.firstExecutionAt = Infinity;
		this.lastExecutionAt = 0;
		this.repeats = 0;
		this.credentials = credentials;
		this.webhookBaseUrl = `${this.url}/${path}`;
		const activation = {
			credentials,
			staticData: this.database,
			webhookBaseUrl: this.webhookBaseUrl,
		};
		this.reachable = true;
		await runHook(this.trigger, 'create', { ...activation, parameters });
		const subscriptionId = (this.database[NODE_KEY] as IDataObject).subscriptionId as number;
		return { activation, subscriptionId };
	}

	/** Every n8n process stopped: its port refuses connections. */
	async close(): Promise<void> {
		const server = this.server;
		if (!server) return;
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	}

	/** n8n started again, on the port it had. */
	async restart(): Promise<void> {
		const server = this.server;
		if (!server) throw new Error('n8n was never started');
		const port = Number(new URL(this.url).port);
		await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
	}
}

/**
 * Resolves once no recovery run is under way in this process for the workflow (runHook's and
 * runWebhook's default workflow and node), seen idle on 2 looks 10 ms apart (a run a delivery set
 * off starts after a short wait).
 */
export async function recoveryIdle(timeoutMs = 120_000): Promise<void> {
	const recovery = recoveryOf('workflow-under-test:node-under-test');
	const deadline = Date.now() + timeoutMs;
	for (let idle = 0; idle < 2; ) {
		await new Promise((resolve) => setTimeout(resolve, 10));
		idle = recovery.running ? 0 : idle + 1;
		if (Date.now() > deadline) throw new Error('a recovery run did not end');
	}
}

/** The trigger's recovery requests so far: log pages, redispatches, reachability questions. */
export async function recoveryRequests(
	platform: SandboxClient,
	username: string,
	subscriptionId: number,
) {
	const requests = await platform.requests({ username });
	return requests.filter(
		(r) => r.path.includes(`/${subscriptionId}/logs`) || r.path.endsWith('/relay'),
	);
}

const DAY = 24 * 60 * 60_000;

/**
 * Of requests made at `times` (ms, any order): the most within any 24 hours, and how many fell in
 * each 24 hours from the first.
 */
export function mostInAnyDay(times: number[]): { most: number; days: number[] } {
	const sorted = [...times].sort((a, b) => a - b);
	const { most } = busiestWindow(sorted, DAY);
	const days: number[] = [];
	for (const at of sorted) {
		const day = Math.floor((at - sorted[0]) / DAY);
		days[day] = (days[day] ?? 0) + 1;
	}
	return { most, days: Array.from(days, (count) => count ?? 0) };
}

/**
 * Resolves with the count of the trigger's recovery requests so far once it has stood still for
 * `looks` looks 100 ms apart: a run in the background has ended.
 */
export async function recoveryRequestsSettled(
	platform: SandboxClient,
	username: string,
	subscriptionId: number,
	looks: number,
): Promise<number> {
	let settled = -1;
	for (let stable = 0; stable < looks; ) {
		await new Promise((resolve) => setTimeout(resolve, 100));
		const now = (await recoveryRequests(platform, username, subscriptionId)).length;
		stable = now === settled ? stable + 1 : 0;
		settled = now;
	}
	return settled;
}

/**
 * n8n's clock and the platform's, moved together: short waits at once (on n8n's clock only, or
 * with `together` on the platform's too), each 15-minute sleep (the schedule's) until the caller
 * lets the next check come (`nextCheck`); `pass` moves both meanwhile, and a released sleep ends
 * where it would have, `ms` after it began, however much `pass` moved.
 */
export async function movedClocks(platform: SandboxClient, options: { together?: boolean } = {}) {
	const time = new AheadClock();
	time.offset = (await platform.getClock()).now - Date.now();
	const move = async (ms: number) => {
		time.offset += ms;
		await platform.advanceClock(ms);
	};
	const gate: { release?: () => void } = {};
	const restore = useClock({
		now: () => time.now(),
		sleep: async (ms: number) => {
			if (ms < RESCAN_INTERVAL_MS) {
				// the platform first: n8n never sees its own clock ahead of the platform's
				if (options.together && ms > 0) await platform.advanceClock(ms);
				return await time.sleep(ms);
			}
			const until = time.now() + ms;
			await new Promise<void>((resolve) => (gate.release = resolve));
			await move(Math.max(0, until - time.now()));
		},
	});
	const waitForSleep = async (deadline: number, what: string) => {
		while (gate.release === undefined) {
			if (Date.now() > deadline) throw new Error(what);
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
	};
	/** Lets the schedule make its next check, and resolves once it sleeps again after it. */
	const nextCheck = async () => {
		const deadline = Date.now() + 60_000;
		await waitForSleep(deadline, 'the schedule did not come round to sleep');
		const release = gate.release!;
		gate.release = undefined;
		release();
		await waitForSleep(deadline, 'the check did not end');
	};
	return { time, nextCheck, pass: move, restore };
}
