/**
 * Row 5 in a real n8n: 50 executions at once in one n8n 2.40.7 process, on one credential whose
 * API key the server has expired. n8n's own CredentialsHelper and database do the loading and
 * persisting here (the in-process row uses a store that mirrors them).
 *
 * Workflow: Webhook (POST, respond when the last node finishes) → Learning Platform
 * (Completion → Get Many, Limit 1). A first call warms the credential (first exchange, stored) and
 * n8n's process (the rate-limit bucket learns the limit). Then the sandbox expires the key (401
 * `expired_api_key` from now on) and the bench sends 50 webhook calls at once.
 *
 * - exchanges the sandbox counted during the 50 (target 1: one n8n process);
 * - failed executions (target 0), from n8n's execution list;
 * - the pair n8n stored afterwards is the live one (export:credentials vs the sandbox), and a
 *   further execution works.
 */
import { randomUUID } from 'node:crypto';

import { nodeOutput } from '../../scripts/n8n/client';
import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import { errorText, failedResult, metric, progress, type RowResult } from '../lib/common';
import { REAL_N8N_MODE, realN8n, realN8nSandbox } from '../lib/realN8n';

const EXECUTIONS = 50;
const LP_NODE = 'Learning Platform';

async function call(url: string): Promise<{ status: number; body: string }> {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
		signal: AbortSignal.timeout(300_000),
	});
	return { status: res.status, body: await res.text() };
}

export async function run(): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Concurrency in real n8n: ${EXECUTIONS} executions, one credential, expired key`;
	try {
		const stack = await realN8n();
		const control = await realN8nSandbox();
		const grant = await control.issueRefreshToken(`bench-conc-${process.pid}`);
		const credentialId = `benchConc${process.pid}`.slice(0, 16);
		await stack.host.importCredentials([
			sandboxCredential(credentialId, 'Bench concurrency', grant),
		]);
		const path = `bench-concurrency-${process.pid}`;
		const workflow = await stack.client.createWorkflow({
			name: 'bench: concurrency',
			nodes: [
				{
					id: 'bench-webhook',
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2.1,
					position: [0, 0],
					webhookId: randomUUID(),
					parameters: {
						httpMethod: 'POST',
						path,
						responseMode: 'lastNode',
						responseData: 'firstEntryJson',
						options: {},
					},
				},
				{
					id: 'bench-lp',
					name: LP_NODE,
					type: 'n8n-nodes-learning-platform.learningPlatform',
					typeVersion: 1,
					position: [220, 0],
					parameters: { resource: 'completion', operation: 'getMany', returnAll: false, limit: 1 },
					credentials: { learningPlatformApi: { id: credentialId, name: 'Bench concurrency' } },
				},
			],
			connections: { Webhook: { main: [[{ node: LP_NODE, type: 'main', index: 0 }]] } },
		});
		await stack.client.activate(workflow.id);
		const url = `${stack.main.url}/webhook/${path}`;

		// warm: first exchange stored, rate-limit bucket of the n8n process knows the limit
		const warm = await call(url);
		if (warm.status !== 200)
			throw new Error(`warm-up call answered ${warm.status}: ${warm.body.slice(0, 300)}`);
		const before = await control.auth(grant.username);

		await control.expireApiKey(grant.username);
		progress(`concurrency-n8n: ${EXECUTIONS} webhook calls at once ...`);
		const s0 = performance.now();
		const answers = await Promise.all(
			Array.from({ length: EXECUTIONS }, () =>
				call(url).catch((error: unknown) => ({ status: 0, body: errorText(error) })),
			),
		);
		const ms = performance.now() - s0;
		const after = await control.auth(grant.username);
		const exchanges = after.exchanges - before.exchanges;
		const refused = after.failed_exchanges - before.failed_exchanges;

		const executions = (
			await stack.client.listExecutions({ workflowId: workflow.id, includeData: true })
		).sort((a, b) => Number(a.id) - Number(b.id));
		const burst = executions.slice(1);
		const failed = burst.filter(
			(e) => e.status !== 'success' || nodeOutput(e, LP_NODE).length !== 1,
		);
		const badAnswers = answers.filter((a) => a.status !== 200).length;
		progress(
			`concurrency-n8n: ${exchanges} exchanges, ${failed.length} failed of ${burst.length} executions, ${badAnswers} non-200 answers, ${Math.round(ms)} ms`,
		);

		const stored = await stack.host.storedCredential(credentialId);
		const live = await control.auth(grant.username);
		const storedLive = stored.refreshToken === live.refresh_token && stored.apiKey === live.api_key;
		const check = await call(url);
		const stillWorks = check.status === 200;

		return {
			id: 'concurrency-n8n',
			title,
			mode: REAL_N8N_MODE,
			settings: {
				executions: EXECUTIONS,
				workflow: 'Webhook (respond: last node) → Completion Get Many limit 1',
				expiry: 'server-side expire-api-key (stored expiry still in the future)',
			},
			metrics: [
				metric('exchanges (one n8n process)', exchanges, String(exchanges), {
					text: '1',
					pass: exchanges === 1,
				}),
				metric('failed executions', failed.length, `${failed.length}/${burst.length}`, {
					text: '0',
					pass: failed.length === 0 && burst.length === EXECUTIONS,
				}),
				metric('refused exchanges (401 on refresh)', refused, String(refused), {
					text: '0',
					pass: refused === 0,
				}),
				metric(
					'stored pair is the live one',
					storedLive ? 'yes' : 'no',
					storedLive ? 'yes' : 'no',
					{ text: 'yes', pass: storedLive },
				),
				metric(
					'credential still works afterwards',
					stillWorks ? 'yes' : 'no',
					stillWorks ? 'yes' : `no (${check.status})`,
					{ text: 'yes', pass: stillWorks },
				),
				metric('webhook calls not answered 200', badAnswers, String(badAnswers)),
				metric('wall time of the 50', ms, `${Math.round(ms)} ms`),
			],
			notes: [
				'one warm-up execution first (exchange stored, bucket learnt), then the key expired on the server',
				...(failed[0]
					? [
							`first failed execution: ${failed[0].status} ${JSON.stringify(failed[0].data?.resultData?.error ?? {}).slice(0, 300)}`,
						]
					: []),
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'concurrency-n8n', title, mode: REAL_N8N_MODE }, t0, error);
	}
}
