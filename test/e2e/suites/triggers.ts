// The two triggers in a real n8n. Webhook trigger: activation creates exactly one subscription at
// the sandbox; a simulated completion is delivered, signed, through the TLS front and starts an
// execution with the payload; a tampered body or a wrong token starts none, nor does a platform
// retry of an accepted delivery (identical bytes after a time-out); restarting n8n creates
// no duplicate and forgets no delivery that started an execution; deactivation deletes the
// subscription. The polling trigger across a restart and an outage of n8n is in recipes.test.ts
// (the sandbox demo's feed sync beside the recipes: each completion emitted once), and in queue
// mode queue.test.ts.
import { createHmac } from 'node:crypto';
import * as https from 'node:https';
import {
	nodeOutput,
	type ExecutionSummary,
	type SandboxDelivery,
	type SandboxUser,
} from '../../../scripts/n8n';
import type { IDataObject } from 'n8n-workflow';

import { sharedDeliveries } from '../../../nodes/LearningPlatformTrigger/deliveries/ledgerText';
import { repeatKey } from '../../../nodes/LearningPlatformTrigger/deliveries/repeatKey';
import { STATIC_DATA_FIELDS } from '../../../nodes/LearningPlatformTrigger/staticData';
import { waitFor } from '../../sandbox/helpers';
import {
	demoData,
	executionsSummary,
	importFreshCredentials,
	landed,
	linearWorkflow,
	TYPES,
	uniqueId,
} from '../helpers';
import type { StackContext } from '../helpers';

// the package's parts must exist: a missing one fails this file at load (landed() throws)
landed();

/** POSTs bytes to the TLS front (verifying it with the test CA), as a delivery would arrive. */
function postThroughFront(
	url: string,
	ca: string,
	body: string,
	headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
	return new Promise((resolve, reject) => {
		const request = https.request(
			url,
			{ method: 'POST', ca, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
			(res) => {
				let text = '';
				res.on('data', (chunk) => (text += chunk));
				res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
			},
		);
		request.on('error', reject);
		request.end(body);
	});
}

export function triggersSuite(ctx: StackContext): void {
	describe('triggers in real n8n', () => {
		const hookCred = uniqueId('hookCred');
		const hookWorkflowId = uniqueId('hookWf');
		const webhookId = '3f1e2d4c-5b6a-4789-8a0b-1c2d3e4f5a6b';
		let users: Map<string, SandboxUser>;
		/** Ids of active (not suspended) demo learners: suspended ones are not in the feed. */
		let learner: number[];
		let courses: number[];

		const live = async (username: string) =>
			(await ctx.stack.sandbox!.control.subscriptions(username)).filter((s) => !s.deleted_at);

		beforeAll(async () => {
			users = await importFreshCredentials(ctx.stack, [hookCred]);
			const demo = await demoData(ctx.stack);
			learner = demo.activeLearners.map((u) => u.id);
			courses = demo.content
				.filter((c) => c.contenttype === 'Course' && !c.deleted)
				.map((c) => c.id);
			await ctx.stack.sandbox!.control.setConfig({ rateLimitPerMinute: 10_000 });
			await ctx.stack.host.importWorkflows([
				linearWorkflow(hookWorkflowId, 'e2e: webhook trigger', [
					{
						name: 'Completion created',
						type: TYPES.trigger,
						credentialId: hookCred,
						webhookId,
						parameters: { event: 'Events\\Courses\\Completion_created' },
					},
					{ name: 'Done', type: 'n8n-nodes-base.noOp' },
				]),
			]);
		});

		describe('webhook trigger', () => {
			const hookUser = () => users.get(hookCred)!;
			const expectedUrl = () => `${ctx.stack.webhookBaseUrl}webhook/${webhookId}/webhook`;
			let firstDelivery: SandboxDelivery;

			async function hookExecutions(): Promise<ExecutionSummary[]> {
				return ctx.client.listExecutions({ workflowId: hookWorkflowId, includeData: true });
			}

			test('activation creates exactly one subscription, pointing at the https front', async () => {
				await ctx.client.activate(hookWorkflowId);
				const subscriptions = await live(hookUser().username);
				expect(subscriptions).toHaveLength(1);
				expect(subscriptions[0]).toMatchObject({
					event: 'Events\\Courses\\Completion_created',
					url: expectedUrl(),
					is_enabled: true,
				});
				expect(subscriptions[0].signing_key).toBeTruthy();
			});

			test('a simulated completion is delivered signed through the TLS front and starts an execution with the payload', async () => {
				const control = ctx.stack.sandbox!.control;
				const simulated = await control.simulateCompletion({ userId: learner[0], contentId: 104 });
				const { completion } = simulated;
				const delivery = await waitFor(
					async () =>
						(await control.deliveries({ username: hookUser().username })).find(
							(d) => d.status_code === 200,
						),
					30_000,
					'the delivery',
					500,
				);
				firstDelivery = delivery;
				expect(delivery.url).toBe(expectedUrl());
				expect(delivery.headers?.['x-signature']).toMatch(/^[0-9a-f]{64}$/);
				expect(
					ctx.stack.front.requests.some(
						(r) =>
							r.method === 'POST' && r.url === `/webhook/${webhookId}/webhook` && r.status === 200,
					),
				).toBe(true);

				const [execution] = await ctx.client.waitForExecutions(hookWorkflowId, 1, 30_000);
				expect(execution.status).toBe('success');
				const [item] = nodeOutput(execution, 'Completion created');
				expect(item).toMatchObject({
					event: 'Events\\Courses\\Completion_created',
					api_version: '2.0',
				});
				const payload = (
					item.payload as {
						completion: { id: number; user: { username: string }; content_id: number };
					}
				).completion;
				expect(payload.id).toBe(completion.completionid);
				expect(payload.user.username).toBe(completion.username);
				expect(payload.content_id).toBe(104);
				// The execution holds exactly the bytes that were signed.
				expect(item).toEqual(JSON.parse(String(delivery.body)));
			});

			// n8n saves a node's static data only when it notices a write after its own reset (n8n
			// 2.x builds a second Workflow before the save: deliveries/staticDataSave.ts). Judged by
			// what n8n stored: the delivery that started an execution is in the saved ledger, under
			// its repeat key, so a restart or another process recognises its retry.
			test("n8n stored the delivery's repeat key with the workflow's static data", async () => {
				const [subscription] = await live(hookUser().username);
				const body = String(firstDelivery.body);
				const sent = JSON.parse(body) as { event: string; payload: unknown };
				const key = repeatKey(
					{
						workflowId: hookWorkflowId,
						nodeId: `${hookWorkflowId}-0`,
						mode: 'webhook',
						subscriptionId: subscription.id,
					},
					sent.event,
					sent.payload,
					Buffer.from(body),
				);
				const stored = await waitFor(
					async () => {
						const workflow = await ctx.client.getWorkflow(hookWorkflowId);
						const node = (workflow?.staticData as Record<string, IDataObject> | undefined)?.[
							'node:Completion created'
						];
						return node && sharedDeliveries(node).has(key) ? node : undefined;
					},
					30_000,
					"the delivery's key in the stored static data",
					500,
				);
				expect(Object.keys(stored).every((field) => field in STATIC_DATA_FIELDS)).toBe(true);
			});

			test('a tampered body, a wrong token or a missing signature start no execution', async () => {
				expect(firstDelivery).toBeDefined();
				const before = (await hookExecutions()).length;
				const headers = { ...(firstDelivery.headers ?? {}) } as Record<string, string>;
				delete headers['content-length'];
				const body = String(firstDelivery.body);
				const ca = ctx.stack.certificates.caCertPem;
				const tampered = body.replace(
					/"content_id":(\d+)/,
					(_m, id) => `"content_id":${Number(id) + 1}`,
				);
				expect(tampered).not.toBe(body);

				const attempts = {
					tamperedBody: await postThroughFront(expectedUrl(), ca, tampered, headers),
					wrongToken: await postThroughFront(expectedUrl(), ca, body, {
						...headers,
						authorization: 'Bearer not-the-token',
					}),
					noSignature: await postThroughFront(
						expectedUrl(),
						ca,
						body,
						Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'x-signature')),
					),
				};
				for (const [name, answer] of Object.entries(attempts)) {
					expect({ name, status: answer.status }).toEqual({ name, status: 401 });
				}
				// The genuine bytes pass both checks (the checks above did not just reject everything);
				// they already started an execution, so n8n acknowledges them as a platform retry.
				const genuine = await postThroughFront(expectedUrl(), ca, body, headers);
				expect(genuine.status).toBe(200);
				expect(JSON.parse(genuine.body)).toEqual({
					received: true,
					passedOn: false,
					repeated: true,
				});

				// Another event occurrence (another completion record) with a valid signature still
				// starts one.
				const sent = JSON.parse(body) as { payload: { completion: { id: number } } };
				const fresh = JSON.stringify({
					...sent,
					payload: {
						...sent.payload,
						completion: { ...sent.payload.completion, id: sent.payload.completion.id + 1_000_000 },
					},
					delivery_id: 'e2e-fresh',
				});
				const signingKey = (await live(hookUser().username))[0].signing_key as string;
				const freshHeaders = {
					...headers,
					'x-signature': createHmac('sha256', signingKey).update(fresh).digest('hex'),
				};
				expect((await postThroughFront(expectedUrl(), ca, fresh, freshHeaders)).status).toBe(200);

				// The replay was answered `repeated: true` above: its webhook() returned no workflow
				// data, so no execution can come of it later; the fresh one's execution is the marker.
				const after = await ctx.client.waitForExecutions(hookWorkflowId, before + 1, 30_000);
				expect((await hookExecutions()).length).toBe(before + 1);
				expect(after.every((e) => e.status === 'success')).toBe(true);
			});

			test('a platform retry after a time-out (identical bytes, first attempt slow) starts no second execution', async () => {
				const control = ctx.stack.sandbox!.control;
				const before = (await hookExecutions()).length;
				// The front holds n8n's answer back past the platform's time-out, so the sandbox retries
				// the same bytes while the first attempt is still being answered.
				const { deliveryTimeoutMs, deliveryMaxAttempts, deliveryBackoffMs } =
					(await control.getConfig()) as unknown as Record<string, number>;
				await control.setConfig({
					deliveryTimeoutMs: 1000,
					deliveryMaxAttempts: 3,
					deliveryBackoffMs: 100,
				});
				ctx.stack.front.delayResponses(2500);
				try {
					await control.simulateCompletion({ userId: learner[1], contentId: 104 });
					const attempts = await waitFor(
						async () => {
							const mine = (await control.deliveries({ username: hookUser().username })).filter(
								(d) => d.event === 'Events\\Courses\\Completion_created',
							);
							const last = mine[mine.length - 1];
							const sameEvent = mine.filter((d) => d.body === last?.body);
							return sameEvent.length >= 2 ? sameEvent : undefined;
						},
						30_000,
						'a retried delivery',
						500,
					);
					expect(new Set(attempts.map((d) => d.body)).size).toBe(1);
					// every attempt has been made (the platform gives up after 3)
					await waitFor(
						async () => {
							const all = await control.deliveries({ username: hookUser().username });
							return all.filter((d) => d.body === attempts[0].body).length === 3 ? true : undefined;
						},
						30_000,
						'the third attempt',
						200,
					);
				} finally {
					ctx.stack.front.delayResponses(0);
					await control.setConfig({ deliveryTimeoutMs, deliveryMaxAttempts, deliveryBackoffMs });
				}
				// The marker that n8n has decided on all three: a later delivery (another completion)
				// has started its execution. The retried completion then ran exactly once.
				await control.simulateCompletion({ userId: learner[2], contentId: 106 });
				const after = await ctx.client.waitForExecutions(hookWorkflowId, before + 2, 30_000);
				expect(after.length).toBe(before + 2);
				expect((await hookExecutions()).length).toBe(before + 2);
			});

			test('restarting n8n creates no duplicate subscription, forgets no delivery that ran, and deliveries still arrive', async () => {
				const control = ctx.stack.sandbox!.control;
				// The newest delivery started an execution and none came after it: only n8n's save after
				// that execution can have stored it (n8n 2.x dropped that save: issue 32).
				const newest = (await control.deliveries({ username: hookUser().username }))
					.filter((d) => d.status_code === 200 && d.response?.includes('"passedOn":true'))
					.sort((a, b) => a.id - b.id)
					.at(-1);
				expect(newest).toBeDefined();
				const before = await live(hookUser().username);
				await ctx.stack.main.restart();
				await ctx.client.waitForPublication(hookWorkflowId, 'published');
				const after = await live(hookUser().username);
				expect(after.map((s) => s.id)).toEqual(before.map((s) => s.id));
				expect(await control.subscriptions(hookUser().username)).toHaveLength(1);

				const count = (await hookExecutions()).length;
				// the platform sends it again (its retry after a lost answer): known from what n8n stored
				const headers = { ...(newest!.headers ?? {}) } as Record<string, string>;
				delete headers['content-length'];
				const again = await postThroughFront(
					expectedUrl(),
					ctx.stack.certificates.caCertPem,
					String(newest!.body),
					headers,
				);
				expect({ status: again.status, body: JSON.parse(again.body) as unknown }).toEqual({
					status: 200,
					body: { received: true, passedOn: false, repeated: true },
				});

				await control.simulateCompletion({ userId: learner[1], contentId: 105 });
				const executions = await ctx.client.waitForExecutions(hookWorkflowId, count + 1, 60_000);
				expect(executionsSummary(executions.filter((e) => e.status !== 'success'))).toBe('');
				expect((await hookExecutions()).length).toBe(count + 1);
			});

			test('publishing an edit of the trigger itself (an option set) while completions arrive keeps its subscription; each completion runs once', async () => {
				const control = ctx.stack.sandbox!.control;
				const before = await live(hookUser().username);
				const seen = new Set((await hookExecutions()).map((e) => String(e.id)));
				// retries over seconds, as a platform's are: an attempt that reaches n8n between the
				// trigger's teardown and its activation (404) is tried again
				const retries = await control.getConfig();
				await control.setConfig({ deliveryMaxAttempts: 5, deliveryBackoffMs: 2_000 });
				// restored whatever happens: the next test deactivates, and the platform's long retries
				// of a delivery failed here would hold its subscription's retirement past its wait
				try {
					const fired: number[] = [];
					let published = false;
					// a (learner, course) pair completed again updates its record (no "created" event): each
					// completion here gets a pair of its own, none the tests above used
					const pairs = courses
						.filter((contentId) => contentId > 106)
						.flatMap((contentId) => learner.map((userId) => ({ userId, contentId })));
					const fire = async () =>
						fired.push(
							(await control.simulateCompletion(pairs[fired.length])).completion.completionid,
						);
					// before, while and after n8n tears the trigger down and activates it again
					const completions = (async () => {
						while (!published && fired.length < pairs.length - 1) {
							await fire();
							await new Promise((resolve) => setTimeout(resolve, 250));
						}
					})();
					await ctx.client.publishEdit(hookWorkflowId, (workflow) => {
						const node = workflow.nodes.find((n) => n.name === 'Completion created')!;
						// "Ignore Repeated Deliveries" set to its default: n8n re-registers a trigger whose
						// parameters changed (its delete, then its checkExists)
						node.parameters = {
							...(node.parameters as Record<string, unknown>),
							options: { ignoreRepeatedDeliveries: true },
						};
					});
					published = true;
					await completions;
					await fire();

					const completionIds = async () =>
						(await hookExecutions())
							.filter((e) => !seen.has(String(e.id)) && e.stoppedAt)
							.map((e) =>
								e.status === 'success'
									? (
											nodeOutput(e, 'Completion created')[0].payload as {
												completion: { id: number };
											}
										).completion.id
									: `execution ${e.id}: ${e.status}`,
							);
					await waitFor(
						async () => (await completionIds()).length >= fired.length,
						120_000,
						() => `${fired.length} executions`,
						1000,
					);
					// retries of anything that failed during the publish had their time too
					await new Promise((resolve) => setTimeout(resolve, 5_000));
					expect((await completionIds()).sort()).toEqual([...fired].sort());
					expect((await live(hookUser().username)).map((s) => s.id)).toEqual(
						before.map((s) => s.id),
					);
				} finally {
					await control.setConfig({
						deliveryMaxAttempts: retries.deliveryMaxAttempts,
						deliveryBackoffMs: retries.deliveryBackoffMs,
					});
				}
			});

			// (that a deleted subscription receives nothing is the sandbox's contract, tested there)
			test('deactivation deletes the subscription (once no activation followed: a grace of 10 s)', async () => {
				const control = ctx.stack.sandbox!.control;
				await ctx.client.deactivate(hookWorkflowId);
				await waitFor(
					async () => (await live(hookUser().username)).length === 0,
					60_000,
					'the subscription deleted after the grace period',
					500,
				);
				const all = await control.subscriptions(hookUser().username);
				expect(all).toHaveLength(1);
				expect(all[0].deleted_at).toBeTruthy();
			});
		});
	});
}
