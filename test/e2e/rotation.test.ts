// Credential rotation in a real n8n: what n8n stored (`n8n export:credentials --decrypted`) against
// what the sandbox considers live, and executions racing from an expired API key, in the running
// n8n (20 webhook-started executions at once) and across processes (3 `n8n execute` at once).
import { fetchN8n, log, type SandboxUser } from '../../scripts/n8n';
import {
	executionsSummary,
	importFreshCredentials,
	landed,
	linearWorkflow,
	presentRefreshToken,
	TYPES,
	uniqueId,
	useStack,
	webhookStart,
} from './helpers';

// the package's parts must exist: a missing one fails this file at load (landed() throws)
landed();

describe('credential rotation in real n8n', () => {
	// PostgreSQL: three `n8n execute` processes and the main process write the database at once (a
	// SQLite file answers SQLITE_BUSY to all but one).
	const ctx = useStack('e2e-rotation', { database: 'postgres' });
	const credId = uniqueId('rotCred');
	const hookWorkflowId = uniqueId('rotHook');
	const cliWorkflowId = uniqueId('rotCli');
	const hookPath = `rotation-${hookWorkflowId.toLowerCase()}`;
	let user: SandboxUser;

	const eventsNode = {
		name: 'Events',
		type: TYPES.action,
		credentialId: credId,
		parameters: { resource: 'webhook', operation: 'getEvents' },
	};

	async function callHook(): Promise<{ status: number; body: string }> {
		const response = await fetchN8n(`${ctx.stack.main.url}/webhook/${hookPath}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
			signal: AbortSignal.timeout(180_000),
		});
		return { status: response.status, body: await response.text() };
	}

	async function expectStoredMatchesLive(): Promise<void> {
		const live = await ctx.stack.sandbox!.control.auth(user.username);
		const stored = await ctx.stack.host.storedCredential(credId);
		expect(stored.refreshToken).toBe(live.refresh_token);
		expect(stored.apiKey).toBe(live.api_key);
	}

	/** Sets the instant at which the `n8n execute` runs leave their Wait node (public API update). */
	async function setMeetingTime(at: Date): Promise<void> {
		const workflow = await ctx.client.api<{
			name: string;
			nodes: Array<Record<string, unknown>>;
			connections: unknown;
			settings: unknown;
		}>('GET', `/workflows/${cliWorkflowId}`);
		const nodes = workflow.nodes.map((n) =>
			n.name === 'Together'
				? { ...n, parameters: { resume: 'specificTime', dateTime: at.toISOString() } }
				: n,
		);
		await ctx.client.api('PUT', `/workflows/${cliWorkflowId}`, {
			name: workflow.name,
			nodes,
			connections: workflow.connections,
			settings: { executionOrder: 'v1' },
		});
	}

	beforeAll(async () => {
		user = (await importFreshCredentials(ctx.stack, [credId])).get(credId)!;
		// The rate limit is not under test here (the bench and the queue suite measure it).
		await ctx.stack.sandbox!.control.setConfig({ rateLimitPerMinute: 10_000 });
		await ctx.stack.host.importWorkflows([
			linearWorkflow(hookWorkflowId, 'e2e rotation: webhook-started', [
				webhookStart(hookPath),
				eventsNode,
			]),
			linearWorkflow(cliWorkflowId, 'e2e rotation: n8n execute', [
				{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' },
				{
					name: 'Together',
					type: 'n8n-nodes-base.wait',
					typeVersion: 1.1,
					parameters: { resume: 'specificTime', dateTime: new Date().toISOString() },
				},
				eventsNode,
			]),
		]);
		await ctx.client.activate(hookWorkflowId);
	});

	test('exchanges forced by executions are persisted: n8n stores the live pair, the previous token is dead', async () => {
		const first = await callHook(); // empty API key: the first use exchanges
		expect(first.status).toBe(200);
		// The Webhook node answers with the first item of the last node: the first event name.
		expect(JSON.parse(first.body)).toMatchObject({
			event: expect.stringMatching(/^Events\\/),
			wildcard: false,
		});

		await ctx.stack.sandbox!.control.expireApiKey(user.username);
		const second = await callHook(); // 401 -> preAuthentication -> retry
		expect(second.status).toBe(200);

		const live = await ctx.stack.sandbox!.control.auth(user.username);
		expect(live.exchanges).toBe(2);
		expect(live.failed_exchanges).toBe(0);
		await expectStoredMatchesLive();

		// The token imported at the start was spent by the first exchange.
		expect(await presentRefreshToken(user, user.refresh_token)).toBe(401);
		// A refused refresh invalidates nothing: the stored pair still works, without a new exchange.
		const third = await callHook();
		expect(third.status).toBe(200);
		expect((await ctx.stack.sandbox!.control.auth(user.username)).exchanges).toBe(2);

		const executions = await ctx.client.listExecutions({
			workflowId: hookWorkflowId,
			includeData: true,
		});
		expect(executions.filter((e) => e.status === 'success')).toHaveLength(3);
	});

	test('20 executions at once in n8n and 3 `n8n execute` processes at once, all from an expired key: none fails', async () => {
		const control = ctx.stack.sandbox!.control;
		const before = await control.auth(user.username);
		const hookBefore = (await ctx.client.listExecutions({ workflowId: hookWorkflowId })).length;

		// 20 at once inside the running n8n.
		await control.expireApiKey(user.username);
		const t0 = Date.now();
		const answers = await Promise.all(Array.from({ length: 20 }, () => callHook()));
		const inProcessMs = Date.now() - t0;
		expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
		const afterInProcess = await control.auth(user.username);
		const hookExecutions = await ctx.client.waitForExecutions(
			hookWorkflowId,
			hookBefore + 20,
			120_000,
		);
		const failedHook = hookExecutions.filter((e) => e.status !== 'success');
		expect(executionsSummary(failedHook)).toBe('');
		expect(hookExecutions).toHaveLength(hookBefore + 20);
		await expectStoredMatchesLive();

		// 3 separate n8n processes at once, sharing the database. They boot at different speeds, so
		// a Wait node holds each run until one common instant: the three then race for real.
		await control.expireApiKey(user.username);
		await setMeetingTime(new Date(Date.now() + 45_000));
		const t1 = Date.now();
		const runs = await Promise.all([0, 1, 2].map(() => ctx.stack.host.executeCli(cliWorkflowId)));
		const crossProcessMs = Date.now() - t1;
		const afterCli = await control.auth(user.username);
		if (process.env.LP_E2E_DEBUG) {
			const requests = await control.requests({ username: user.username });
			log(
				JSON.stringify(
					requests.slice(-12).map((r) => [r.at, r.path, r.authorization_kind, r.status]),
				),
			);
		}
		// Judged by what n8n stored: `n8n execute` 2.40.7 can crash on exit after storing its run.
		const cliExecutions = await ctx.client
			.waitForExecutions(cliWorkflowId, 3, 60_000)
			.catch((error: Error) => {
				const output = runs
					.map(
						(run) =>
							`code ${run.code}, signal ${run.signal}:\n${(run.stdout + run.stderr).slice(-1500)}`,
					)
					.join('\n---\n');
				throw new Error(`${error.message}\nn8n execute output:\n${output}`);
			});
		expect(executionsSummary(cliExecutions.filter((e) => e.status !== 'success'))).toBe('');
		expect(cliExecutions).toHaveLength(3);

		// The stored credential is the live one and still works.
		await expectStoredMatchesLive();
		const after = await callHook();
		expect(after.status).toBe(200);

		const report = {
			inProcess: {
				executions: 20,
				ms: inProcessMs,
				exchanges: afterInProcess.exchanges - before.exchanges,
				refusedExchanges: afterInProcess.failed_exchanges - before.failed_exchanges,
			},
			crossProcess: {
				processes: 3,
				ms: crossProcessMs,
				exchanges: afterCli.exchanges - afterInProcess.exchanges,
				refusedExchanges: afterCli.failed_exchanges - afterInProcess.failed_exchanges,
			},
		};
		log(`rotation under concurrency: ${JSON.stringify(report)}`);
		// One exchange serves the 20 in-process executions (single flight).
		expect(report.inProcess.exchanges).toBe(1);
		expect(report.crossProcess.exchanges).toBeGreaterThanOrEqual(1);
	});
});
