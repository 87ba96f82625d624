/**
 * Row 2 in a real n8n: Completion → Get Many, Return All, over the whole feed (100,000 generated
 * records plus the demo's), inside n8n with the packed package, compared with a bare undici loop
 * over the same pages of the same sandbox. Unlike the in-process row, n8n's own credential
 * loading (a database read and a decryption per `getCredentials`) is part of the figure.
 *
 * Workflow: Webhook (POST, respond when the last node finishes) → Learning Platform (Return All,
 * Simplify off) → Limit 1, so the answer is one small item and not 100,000 records over HTTP; the
 * workflow saves no successful execution data, so n8n's database write of the records is not
 * timed either. The node's time is the webhook call's wall time (its own overhead is tens of ms
 * next to seconds of walking). One call first warms the credential (exchange) and the rate-limit
 * bucket; then node walks and bare loops alternate, and the row compares the best of each (the
 * machine is shared: the best run is the one least disturbed) and shows the medians too.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

import { sandboxCredential } from '../../scripts/n8n/sandbox-api';
import {
	fixed,
	median,
	metric,
	progress,
	seconds,
	failedResult,
	type RowResult,
} from '../lib/common';
import { REAL_N8N_MODE, realN8n, realN8nSandbox } from '../lib/realN8n';

const GENERATED = 100_000;
const PAGE = 500;
const RATE_LIMIT = 100_000;
const WALKS = 3;
const LP_NODE = 'Learning Platform';

async function bareLoop(reportRoot: string, apiKey: string, agent: Agent) {
	let cursor: string | null = null;
	let records = 0;
	let requests = 0;
	const t0 = performance.now();
	do {
		const qs = new URLSearchParams({ limit: String(PAGE) });
		if (cursor) qs.set('cursor', cursor);
		const res = await request(`${reportRoot}/completions?${qs}`, {
			headers: {
				authorization: `Bearer ${apiKey}`,
				accept: 'application/json',
				'user-agent': 'n8n-nodes-learning-platform-bench',
			},
			dispatcher: agent,
		});
		requests++;
		if (res.statusCode !== 200)
			throw new Error(`bare loop: HTTP ${res.statusCode}: ${await res.body.text()}`);
		const page = (await res.body.json()) as { data: unknown[]; next_cursor: string | null };
		records += page.data.length;
		cursor = page.next_cursor;
	} while (cursor);
	return { records, requests, ms: performance.now() - t0 };
}

export async function run(): Promise<RowResult> {
	const t0 = Date.now();
	const title = 'Feed sync in real n8n: Return All over the whole feed vs a bare HTTP loop';
	try {
		const stack = await realN8n();
		const control = await realN8nSandbox();
		await control.setConfig({ rateLimitPerMinute: RATE_LIMIT });
		await control.generateFeed(GENERATED);
		const grant = await control.issueRefreshToken(`bench-feed-${process.pid}`);
		const credentialId = `benchFeed${process.pid}`.slice(0, 16);
		await stack.host.importCredentials([sandboxCredential(credentialId, 'Bench feed', grant)]);
		const path = `bench-feed-${process.pid}`;
		const workflow = await stack.client.createWorkflow({
			name: 'bench: feed in n8n',
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
					typeVersion: 1.1,
					position: [220, 0],
					parameters: {
						resource: 'completion',
						operation: 'getMany',
						returnAll: true,
						simple: false,
					},
					credentials: { learningPlatformApi: { id: credentialId, name: 'Bench feed' } },
				},
				{
					id: 'bench-limit',
					name: 'Limit',
					type: 'n8n-nodes-base.limit',
					typeVersion: 1,
					position: [440, 0],
					parameters: { maxItems: 1 },
				},
			],
			connections: {
				Webhook: { main: [[{ node: LP_NODE, type: 'main', index: 0 }]] },
				[LP_NODE]: { main: [[{ node: 'Limit', type: 'main', index: 0 }]] },
			},
			settings: {
				executionOrder: 'v1',
				saveDataSuccessExecution: 'none',
				saveDataErrorExecution: 'all',
			},
		});
		await stack.client.activate(workflow.id);
		const url = `${stack.main.url}/webhook/${path}`;
		const walk = async () => {
			const s0 = performance.now();
			const res = await fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: '{}',
				signal: AbortSignal.timeout(600_000),
			});
			const body = await res.text();
			if (res.status !== 200) throw new Error(`walk answered ${res.status}: ${body.slice(0, 300)}`);
			return performance.now() - s0;
		};

		progress('feed-n8n: warm-up walk (exchange, bucket) ...');
		await walk();
		const apiKey = (await control.auth(grant.username)).api_key ?? '';
		const reportRoot = `${grant.base_url}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${grant.tenancy_id}`;
		const agent = new Agent({ keepAliveTimeout: 10_000 });

		const nodeMs: number[] = [];
		const bareMs: number[] = [];
		let records = 0;
		let nodeRequests = 0;
		let bareRequests = 0;
		for (let i = 0; i < WALKS; i++) {
			await control.clearRequests();
			nodeMs.push(await walk());
			nodeRequests = (await control.requests({ username: grant.username, path: '/completions' }))
				.length;
			const bare = await bareLoop(reportRoot, apiKey, agent);
			bareMs.push(bare.ms);
			records = bare.records;
			bareRequests = bare.requests;
			progress(
				`feed-n8n: walk ${i + 1}: node ${Math.round(nodeMs[i])} ms (${nodeRequests} requests), bare ${Math.round(bare.ms)} ms (${bare.requests} requests)`,
			);
		}
		await agent.close();

		const best = Math.min(...bareMs) / Math.min(...nodeMs);
		const medianRatio = median(bareMs) / median(nodeMs);
		const expectedRequests = Math.ceil(records / PAGE);
		return {
			id: 'feed-n8n',
			title,
			mode: REAL_N8N_MODE,
			settings: {
				records,
				page: PAGE,
				walks: WALKS,
				rateLimitPerMinute: RATE_LIMIT,
				workflow: 'Webhook (respond: last node) → Completion Get Many (Return All) → Limit 1',
				timing: 'webhook call wall time; the bare loop runs in the bench process (Node 20)',
			},
			metrics: [
				metric(
					'records/s of the node ÷ records/s of the bare loop (best ÷ best)',
					best,
					fixed(best, 2),
					{ text: '≥ 0.8', pass: best >= 0.8 },
				),
				metric('the same, median ÷ median', medianRatio, fixed(medianRatio, 2)),
				metric(
					'requests ÷ ceil(records / 500)',
					nodeRequests / expectedRequests,
					`${nodeRequests}/${expectedRequests}`,
					{ text: '1.0', pass: nodeRequests === expectedRequests },
				),
				metric('best node walk', Math.min(...nodeMs), seconds(Math.min(...nodeMs))),
				metric('best bare loop', Math.min(...bareMs), seconds(Math.min(...bareMs))),
				metric('bare loop requests', bareRequests, String(bareRequests)),
			],
			notes: [
				`node walks: ${nodeMs.map((ms) => seconds(ms)).join(', ')}; bare loops: ${bareMs.map((ms) => seconds(ms)).join(', ')}`,
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'feed-n8n', title, mode: REAL_N8N_MODE }, t0, error);
	}
}
