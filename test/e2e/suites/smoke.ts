// The packed package loads in a real n8n 2.40.7: node and credential types registered, a
// credential imported through the CLI is stored encrypted and exported decrypted unchanged, a
// workflow runs from the CLI, and the TLS front serves n8n over https with the test CA.
import * as https from 'node:https';
import {
	declaredTypes,
	executionError,
	installDemo,
	nodeOutput,
	type ExecutionSummary,
} from '../../../scripts/n8n';
import { linearWorkflow, PACKAGE_NAME, TYPES, uniqueId } from '../helpers';
import type { StackContext } from '../helpers';

export function smokeSuite(ctx: StackContext): void {
	describe('harness smoke: the packed package in real n8n', () => {
		test('n8n lists every node and credential type the packed package declares', async () => {
			const declared = await declaredTypes(ctx.stack.packed.tarball);
			expect(declared.nodes).toContain(TYPES.action);
			expect(declared.credentials).toEqual([TYPES.credential]);
			const nodeTypes = await ctx.client.nodeTypeNames();
			const ours = nodeTypes.filter((t) => t.startsWith(`${PACKAGE_NAME}.`));
			for (const type of declared.nodes) expect(ours).toContain(type);
			// n8n adds a `<name>Tool` variant of nodes marked `usableAsTool` (for AI agents); nothing else.
			const extras = ours.filter((t) => !declared.nodes.includes(t));
			for (const extra of extras) expect(declared.nodes).toContain(extra.replace(/Tool$/, ''));
			expect(extras).not.toContain(`${TYPES.trigger}Tool`);
			expect(extras).not.toContain(`${TYPES.poll}Tool`);
			expect(nodeTypes).toContain('n8n-nodes-base.manualTrigger');
			expect(await ctx.client.credentialTypeNames()).toContain(TYPES.credential);
		});

		test('a credential imported with the CLI is stored encrypted and exported decrypted unchanged', async () => {
			const id = uniqueId('smokeCred');
			const data = {
				baseUrl: ctx.stack.sandbox?.url ?? 'http://127.0.0.1:9',
				tenancyId: '42',
				username: 'smoke-user',
				refreshToken: 'rt-smoke-123',
				apiKey: '',
				apiKeyExpiresAt: '',
			};
			await ctx.stack.host.importCredentials([
				{ id, name: 'Smoke credential', type: TYPES.credential, data },
			]);
			const exported = await ctx.stack.host.exportCredentials();
			const found = exported.find((c) => c.id === id);
			expect(found?.type).toBe(TYPES.credential);
			expect(found?.data).toMatchObject(data);
		});

		test('a workflow imported with the CLI runs with `n8n execute` in its own process', async () => {
			const id = uniqueId('smokeWf');
			await ctx.stack.host.importWorkflows([
				linearWorkflow(id, 'Smoke: manual + set', [
					{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' },
					{
						name: 'Set',
						type: 'n8n-nodes-base.set',
						typeVersion: 3.4,
						parameters: { mode: 'raw', jsonOutput: '={"hello": "n8n", "two": {{ 1 + 1 }} }' },
					},
				]),
			]);
			const stored = await executedAndStored(id);
			expect(stored.status).toBe('success');
			const executions = await ctx.client.listExecutions({ workflowId: id, includeData: true });
			expect(executions).toHaveLength(1);
			expect(executions[0].status).toBe('success');
			expect(executions[0].mode).toBe('cli');
			expect(nodeOutput(executions[0], 'Set')).toEqual([{ hello: 'n8n', two: 2 }]);
		});

		test('the TLS front serves n8n over https, verified with the test CA', async () => {
			const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
				https
					.get(
						`${ctx.stack.front.url}/healthz`,
						{ ca: ctx.stack.certificates.caCertPem },
						(res) => {
							let text = '';
							res.on('data', (c) => (text += c));
							res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
						},
					)
					.on('error', reject);
			});
			expect(body.status).toBe(200);
			expect(JSON.parse(body.text)).toEqual({ status: 'ok' });
			expect(ctx.stack.front.requests.some((r) => r.url === '/healthz' && r.status === 200)).toBe(
				true,
			);
		});

		/**
		 * Runs a workflow with `n8n execute` and returns the execution n8n stored. The stored run is the
		 * verdict: the CLI of n8n 2.40.7 can crash on exit after storing it, and its exit status says
		 * nothing then. Its output only serves to explain a missing or failed run.
		 */
		async function executedAndStored(workflowId: string): Promise<ExecutionSummary> {
			const cli = await ctx.stack.host.executeCli(workflowId);
			const explain = () =>
				`n8n execute (code ${cli.code}, signal ${cli.signal}):\n${(cli.stdout + cli.stderr).slice(-3000)}`;
			const [stored] = await ctx.client
				.waitForExecutions(workflowId, 1, 60_000)
				.catch((error: Error) => {
					throw new Error(`${error.message}\n${explain()}`);
				});
			const error = executionError(stored);
			if (error) throw new Error(`${workflowId} failed: ${error}\n${explain()}`);
			return stored;
		}

		test('the demo of `npm run sandbox` works: triggers activate, a completion fires, the manual demos run', async () => {
			const control = ctx.stack.sandbox!.control;
			await control.setConfig({ rateLimitPerMinute: 10_000 }); // the bulk demo paces itself at the server's limit
			const installed = await installDemo(ctx.stack, { apiStateExisted: false });
			expect(installed.imported.sort()).toEqual([
				'LpDemoAttendance',
				'LpDemoBookmarks0',
				'LpDemoCatchUp000',
				'LpDemoCompletion',
				'LpDemoFeedSync00',
				'LpDemoHrAssist0',
				'LpDemoHrMcp0000',
				'LpDemoSheets0000',
				'LpDemoSheetsPoll',
				'LpDemoWeeklyRep0',
			]);

			const live = (await control.subscriptions(ctx.stack.sandbox!.username)).filter(
				(s) => !s.deleted_at,
			);
			expect(live.map((s) => s.url)).toEqual([
				`${ctx.stack.webhookBaseUrl}webhook/7d2b9a4e-3c1f-4e8a-b6d5-0a1b2c3d4e01/webhook`,
			]);

			await control.simulateCompletion({});
			const [hr] = await ctx.client.waitForExecutions('LpDemoCompletion', 1, 60_000);
			expect(executionError(hr)).toBeUndefined();
			const [record] = nodeOutput(hr, 'HR record');
			for (const key of ['employee', 'email', 'course', 'completedAt'])
				expect(record[key]).toEqual(expect.stringMatching(/\S/));

			const attendanceRun = await executedAndStored('LpDemoAttendance');
			const rows = nodeOutput(attendanceRun, 'Attendance row');
			expect(rows.length).toBeGreaterThan(0);
			expect(['Attended', 'Did Not Attend']).toContain(rows[0].status);

			const bulkRun = await executedAndStored('LpDemoBookmarks0');
			const learners = nodeOutput(bulkRun, 'Learners of course 101');
			expect(learners.length).toBeGreaterThan(0);
			expect(nodeOutput(bulkRun, 'Bookmark course 102')).toHaveLength(learners.length);

			// A restart of `npm run sandbox` with its state: nothing is imported again.
			const again = await installDemo(ctx.stack, { apiStateExisted: true });
			expect(again).toEqual({ reactivated: false, imported: [] });
		});
	});
}
