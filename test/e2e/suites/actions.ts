// Every operation of the Learning Platform action node runs once in a real workflow in real n8n,
// and its output is checked against what the sandbox holds and saw.
import {
	fetchN8n,
	nodeOutput,
	type ExecutionSummary,
	type SandboxUser,
} from '../../../scripts/n8n';
import {
	demoData,
	executionsSummary,
	graphWorkflow,
	importFreshCredentials,
	landed,
	TYPES,
	uniqueId,
	webhookStart,
	type NodeSpec,
} from '../helpers';
import type { StackContext } from '../helpers';

// the package's parts must exist: a missing one fails this file at load (landed() throws)
landed();

type Json = Record<string, unknown>;

export function actionsSuite(ctx: StackContext): void {
	describe('every action operation in real n8n', () => {
		const credId = uniqueId('actCred');
		const phase1 = uniqueId('actOne');
		const phase2Prefix = 'actTwo';
		let user: SandboxUser;
		let learnerUsername: string;
		let first: ExecutionSummary;

		const action = (name: string, parameters: Json): NodeSpec => ({
			name,
			type: TYPES.action,
			credentialId: credId,
			parameters,
		});
		const byId = (value: string) => ({ __rl: true, mode: 'id', value });
		const out = (execution: ExecutionSummary, node: string) => nodeOutput(execution, node);

		/** Imports a webhook-started workflow, activates it, calls it once, returns its execution. */
		async function runOnce(
			id: string,
			name: string,
			nodes: NodeSpec[],
			edges: Array<[string, string]>,
		): Promise<ExecutionSummary> {
			const path = `actions-${id.toLowerCase()}`;
			const start = {
				...webhookStart(path),
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			};
			await ctx.stack.host.importWorkflows([
				graphWorkflow(
					id,
					name,
					[start, ...nodes],
					edges.map(([a, b]) => [a === 'start' ? 'Webhook' : a, b]),
				),
			]);
			await ctx.client.activate(id);
			const response = await fetchN8n(`${ctx.stack.main.url}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: '{}',
			});
			expect(response.status).toBe(200);
			const [execution] = await ctx.client.waitForExecutions(id, 1, 300_000);
			await ctx.client.deactivate(id);
			if (execution.status !== 'success')
				throw new Error(`execution failed:\n${executionsSummary([execution])}`);
			return execution;
		}

		beforeAll(async () => {
			user = (await importFreshCredentials(ctx.stack, [credId])).get(credId)!;
			await ctx.stack.sandbox!.control.setConfig({ rateLimitPerMinute: 10_000 });
			learnerUsername = (await demoData(ctx.stack)).activeLearners[3].username;

			first = await runOnce(
				phase1,
				'e2e: every action operation (1)',
				[
					action('Activity completions', {
						resource: 'report',
						operation: 'getActivityCompletions',
						contentId: '101',
						filters: {},
						options: {},
					}),
					action('Attendance', {
						resource: 'report',
						operation: 'getAttendance',
						filters: { contentId: '201' },
						options: {},
					}),
					action('Content', {
						resource: 'report',
						operation: 'getContent',
						filters: { contentId: '101' },
						options: {},
					}),
					action('Content request', {
						resource: 'report',
						operation: 'getContent',
						filters: { contentId: '102' },
						options: { waitForResult: false },
					}),
					action('Result', {
						resource: 'report',
						operation: 'getResult',
						reportType: 'content',
						requestId: '={{ $json.requestid }}',
						options: {},
					}),
					action('Bookmark', {
						resource: 'bookmark',
						operation: 'create',
						username: learnerUsername,
						contentId: '110',
						contentType: 'course',
					}),
					action('Completions', {
						resource: 'completion',
						operation: 'getMany',
						returnAll: false,
						limit: 5,
						filters: {},
						options: {},
					}),
					action('Events', { resource: 'webhook', operation: 'getEvents' }),
					action('Create webhook', {
						resource: 'webhook',
						operation: 'create',
						event: 'Events\\Courses\\Completion_created',
						url: `${ctx.stack.webhookBaseUrl}webhook/e2e-nobody-listens`,
						additionalFields: { signing_key: 'e2e-signing-key-1234' },
					}),
					action('Get webhook', {
						resource: 'webhook',
						operation: 'get',
						webhookId: byId('={{ $json.id }}'),
					}),
					action('Update webhook', {
						resource: 'webhook',
						operation: 'update',
						webhookId: byId('={{ $json.id }}'),
						updateFields: { auth_token: 'e2e-token-5678' },
					}),
					action('List webhooks', { resource: 'webhook', operation: 'getMany', returnAll: true }),
					action('Sample', {
						resource: 'webhook',
						operation: 'sendSample',
						event: 'Events\\Courses\\Completion_created',
					}),
				],
				[
					['start', 'Activity completions'],
					['start', 'Attendance'],
					['start', 'Content'],
					['start', 'Content request'],
					['Content request', 'Result'],
					['start', 'Bookmark'],
					['start', 'Completions'],
					['start', 'Events'],
					['start', 'Create webhook'],
					['Create webhook', 'Get webhook'],
					['Get webhook', 'Update webhook'],
					['Update webhook', 'List webhooks'],
					['start', 'Sample'],
				],
			);
		});

		test('reports: activity completions, attendance, content, and a result fetched by request id', () => {
			const activities = out(first, 'Activity completions');
			expect(activities.length).toBeGreaterThan(0);
			for (const row of activities)
				expect(row).toMatchObject({ contentid: 101, activitycompletionstatus: 'Completed' });

			const attendance = out(first, 'Attendance');
			expect(attendance.length).toBeGreaterThan(0);
			for (const row of attendance) {
				expect(row.contentid).toBe(201);
				expect(['Attended', 'Did Not Attend']).toContain(row.attendancestatus);
			}

			const content = out(first, 'Content');
			expect(content).toHaveLength(1);
			expect(content[0]).toMatchObject({ contentid: 101, contenttype: 'Course' });

			const request = out(first, 'Content request');
			expect(request).toHaveLength(1);
			expect(request[0].requestid).toEqual(expect.any(Number));
			const result = out(first, 'Result');
			expect(result).toHaveLength(1);
			expect(result[0]).toMatchObject({ contentid: 102 });
		});

		test('bookmark: created for the learner at the sandbox', async () => {
			const [bookmark] = out(first, 'Bookmark');
			expect(JSON.stringify(bookmark)).toContain('"bookmarkable_id":110');
			const requests = await ctx.stack.sandbox!.control.requests({
				username: user.username,
				path: 'bookmarks',
			});
			expect(requests.filter((r) => r.method === 'POST' && r.status === 200)).toHaveLength(1);
		});

		test('completions feed: a page of records', () => {
			const records = out(first, 'Completions');
			expect(records).toHaveLength(5);
			for (const record of records)
				expect(record).toEqual(
					expect.objectContaining({
						completionid: expect.any(Number),
						username: expect.any(String),
					}),
				);
		});

		test('webhooks: events, create, get (masked), update, list, sample', () => {
			expect(out(first, 'Events').map((e) => e.event)).toContain(
				'Events\\Courses\\Completion_created',
			);

			const [created] = out(first, 'Create webhook');
			expect(created).toMatchObject({
				event: 'Events\\Courses\\Completion_created',
				signing_key: 'e2e-signing-key-1234',
			});
			const [fetched] = out(first, 'Get webhook');
			expect(fetched.id).toBe(created.id);
			expect(fetched.signing_key).toBe('\u2022'.repeat(8) + '1234');
			const [updated] = out(first, 'Update webhook');
			expect(updated).toMatchObject({ id: created.id, auth_token: 'e2e-token-5678' });
			expect(out(first, 'List webhooks').map((w) => w.id)).toContain(created.id);

			const [sample] = out(first, 'Sample');
			expect(JSON.stringify(sample)).toContain('Completion_created');
		});

		test('webhooks: logs of a failed delivery, redispatch, delete', async () => {
			const control = ctx.stack.sandbox!.control;
			const [created] = out(first, 'Create webhook');
			const webhookId = String(created.id);
			// A delivery to a URL where nothing listens fails and is logged.
			await control.simulateCompletion({ contentId: 111 });
			const deadline = Date.now() + 30_000;
			while (
				!(await control.deliveries({ username: user.username })).some(
					(d) => String(d.subscription_id) === webhookId && d.status_code === 404,
				)
			) {
				if (Date.now() > deadline) throw new Error('no failed delivery logged');
				await new Promise((resolve) => setTimeout(resolve, 500));
			}

			const second = await runOnce(
				uniqueId(phase2Prefix),
				'e2e: every action operation (2)',
				[
					action('Logs', {
						resource: 'webhook',
						operation: 'getLogs',
						webhookId: byId(webhookId),
						returnAll: true,
					}),
					action('Redispatch', {
						resource: 'webhook',
						operation: 'redispatch',
						webhookId: byId(webhookId),
						logId: byId('={{ $json.id }}'),
					}),
					action('Delete', {
						resource: 'webhook',
						operation: 'delete',
						webhookId: byId(webhookId),
					}),
				],
				[
					['start', 'Logs'],
					['Logs', 'Redispatch'],
					['Redispatch', 'Delete'],
				],
			);
			const logs = out(second, 'Logs');
			expect(logs.length).toBeGreaterThanOrEqual(1);
			expect(logs[0]).toMatchObject({ success: false, status_code: 404 });
			expect(JSON.stringify(out(second, 'Redispatch'))).toContain('"success":true');
			expect(out(second, 'Delete')).toHaveLength(1);
			const stored = (await control.subscriptions(user.username)).find(
				(s) => String(s.id) === webhookId,
			);
			expect(stored?.deleted_at).toBeTruthy();
		});
	});
}
