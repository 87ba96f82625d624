// The errors a user can meet, as real n8n stores them: every tested n8n version must show the
// same words (message and description) that the wording module gives. Each case is its own
// webhook-started workflow whose Learning Platform node fails; all run at once.
import { fetchN8n, type ExecutionSummary, type SandboxUser } from '../../../scripts/n8n';
import {
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
// an event no other suite fires: the subscriptions made here (101 of them) receive nothing while the
// suites after this one share the n8n and the sandbox
const QUIZ_ATTEMPT = 'Events\\Quiz\\Attempt_completed';

export function errorsSuite(ctx: StackContext): void {
	describe('errors read the same on every n8n version', () => {
		const creds = {
			main: uniqueId('errMain'),
			cap: uniqueId('errCap'),
			dead: uniqueId('errDead'),
		};
		let users: Map<string, SandboxUser>;
		const failures = new Map<string, { message?: string; description?: string }>();

		const action = (name: string, credentialId: string, parameters: Json): NodeSpec => ({
			name,
			type: TYPES.action,
			credentialId,
			parameters,
		});

		/** A webhook-started workflow that runs `nodes` in a row, and the path that starts it. */
		function failingWorkflow(key: string, nodes: NodeSpec[]) {
			const id = uniqueId(`err${key}`);
			const path = `errors-${id.toLowerCase()}`;
			const start = {
				...webhookStart(path),
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			};
			const edges: Array<[string, string]> = [];
			let previous = 'Webhook';
			for (const node of nodes) {
				edges.push([previous, node.name]);
				previous = node.name;
			}
			return {
				id,
				path,
				workflow: graphWorkflow(id, `e2e errors: ${key}`, [start, ...nodes], edges),
			};
		}

		/** Activates and calls an imported webhook-started workflow; returns its stored execution. */
		async function runToFailure(id: string, path: string): Promise<ExecutionSummary> {
			await ctx.client.activate(id);
			const response = await fetchN8n(`${ctx.stack.main.url}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: '{}',
			});
			expect(response.status).toBe(200);
			const [execution] = await ctx.client.waitForExecutions(id, 1, 300_000);
			await ctx.client.deactivate(id);
			return execution;
		}

		beforeAll(async () => {
			const { control } = ctx.stack.sandbox!;
			users = await importFreshCredentials(ctx.stack, Object.values(creds));
			await control.setConfig({ rateLimitPerMinute: 10_000 });
			// the imported refresh token dies when a new one is issued for the same API user
			await control.issueRefreshToken(users.get(creds.dead)!.username);
			// every content report is answered 429, however often it is repeated
			await control.setFaults({ kind: 'http429', pathPattern: '/content', rate: 1 });

			const url = `${ctx.stack.webhookBaseUrl}webhook/e2e-errors-nobody-listens`;
			const cases: Record<string, NodeSpec[]> = {
				duplicate: [
					action('First', creds.main, {
						resource: 'webhook',
						operation: 'create',
						event: QUIZ_ATTEMPT,
						url,
					}),
					action('Again', creds.main, {
						resource: 'webhook',
						operation: 'create',
						event: QUIZ_ATTEMPT,
						url,
					}),
				],
				cap: [
					{
						name: 'Items',
						type: 'n8n-nodes-base.code',
						typeVersion: 2,
						parameters: {
							jsCode: 'return Array.from({ length: 101 }, (_, i) => ({ json: { i } }));',
						},
					},
					action('Create', creds.cap, {
						resource: 'webhook',
						operation: 'create',
						event: QUIZ_ATTEMPT,
						url: `=${ctx.stack.webhookBaseUrl}webhook/e2e-cap-{{ $json.i }}`,
					}),
				],
				notFound: [
					action('Bookmark', creds.main, {
						resource: 'bookmark',
						operation: 'create',
						username: 'nobody-by-this-name',
						contentId: '110',
						contentType: 'course',
					}),
				],
				rateLimited: [
					action('Content', creds.main, {
						resource: 'report',
						operation: 'getContent',
						filters: {},
						options: {},
					}),
				],
				refused: [action('Events', creds.dead, { resource: 'webhook', operation: 'getEvents' })],
			};
			const workflows = Object.entries(cases).map(
				([key, nodes]) => [key, failingWorkflow(key, nodes)] as const,
			);
			// one CLI import for all: several `n8n import:workflow` at once lock n8n's SQLite (SQLITE_BUSY)
			await ctx.stack.host.importWorkflows(workflows.map(([, w]) => w.workflow));
			try {
				const executions = await Promise.all(
					workflows.map(async ([key, w]) => [key, await runToFailure(w.id, w.path)] as const),
				);
				for (const [key, execution] of executions) {
					expect({ key, status: execution.status }).toEqual({ key, status: 'error' });
					const { message, description } = execution.data?.resultData?.error ?? {};
					failures.set(key, { message, description });
				}
			} finally {
				await control.clearFaults();
			}
		});

		const who = (credential: string) =>
			`API user '${users.get(credential)!.username}' on tenancy '${users.get(credential)!.tenancy_id}'`;

		test('422, the same event and URL twice: the server says why, the advice says what to do', () => {
			expect(failures.get('duplicate')).toEqual({
				message:
					'Could not create the webhook subscription: A subscription for this event and URL already exists.',
				description:
					'A subscription for this event and URL already exists. Update that one instead (Operation "Update"), or use another URL.',
			});
		});

		test('422, the 101st subscription: the cap and what to delete', () => {
			expect(failures.get('cap')).toEqual({
				message:
					'Could not create the webhook subscription: Maximum of 100 subscriptions per API key reached.',
				description:
					'This API user already has 100 webhook subscriptions, the most allowed. Delete unused ones (Operation "Delete") and try again.',
			});
		});

		test('404: which learner or content was not found, in the platform words too', () => {
			expect(failures.get('notFound')).toEqual({
				message:
					'No learner "nobody-by-this-name" or no course with ID 110 on this tenancy (404: User not found.)',
				description: expect.stringContaining("Check the username (the learner's login name)"),
			});
		});

		test('429 on every attempt: named as such after the waits', () => {
			expect(failures.get('rateLimited')).toEqual({
				message: `The learning platform kept answering 429 Too Many Requests for ${who(creds.main)}, even after waiting 20 times`,
				description:
					'Another integration is probably using the same API user heavily. Give each integration its own API user, or run this workflow later.',
			});
		});

		test('a refused refresh token: a new one is asked for, nothing stored changes', async () => {
			expect(failures.get('refused')).toEqual({
				message: `The refresh token for ${who(creds.dead)} was rejected by the learning platform (401). Paste a new refresh token in the credential.`,
				description: expect.stringContaining('Nothing stored in the credential was changed.'),
			});
			const stored = await ctx.stack.host.storedCredential(creds.dead);
			expect(stored.refreshToken).toBe(users.get(creds.dead)!.refresh_token);
		});
	});
}
