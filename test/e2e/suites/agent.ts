// The action node as an AI tool in real n8n: the demo's HR assistant (Chat Trigger -> AI Agent ->
// OpenAI Chat Model on the sandbox's scripted model -> Learning Platform tools) driven by chat
// messages over HTTP (streamed, Responses API: the demo as shipped; and a copy answering with the
// last node through Chat Completions), and the demo's MCP Server Trigger driven by the official
// MCP SDK client.
// The verdicts come from what the scripted model received (sandbox chat log), what the platform
// received (sandbox request log) and what n8n stored, never from the model's own text alone.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
	aiCredential,
	chatUrl,
	demoWorkflows,
	executionError,
	fetchN8n,
	HR_ASSISTANT,
	HR_MCP,
	mcpUrl,
	N8N_VERSION,
	sandboxCredential,
	sendChatMessage,
	type ChatAnswer,
	type ExecutionSummary,
	type WorkflowJson,
} from '../../../scripts/n8n';
import type { ChatRequestEntry, SandboxHandle, Turn } from '../../../sandbox';
import { Api } from '../../sandbox/helpers';
import { toolDescription as bookmarkTool } from '../../../nodes/LearningPlatform/actions/bookmark/create.operation';
import { toolDescription as feedTool } from '../../../nodes/LearningPlatform/actions/completion/getMany.operation';
import { toolDescription as activityTool } from '../../../nodes/LearningPlatform/actions/report/getActivityCompletions.operation';
import { toolDescription as attendanceTool } from '../../../nodes/LearningPlatform/actions/report/getAttendance.operation';
import { demoData, landed } from '../helpers';
import type { StackContext } from '../helpers';

/**
 * What n8n makes of the demo's tool nodes, in one place (update here when the demo's $fromAI()
 * bindings change). Names come from the workflow's node names; descriptions from the operations'
 * own Tool Description (the tool copy's default); parameters from the $fromAI() calls.
 */
const TOOLS = {
	activity: {
		name: 'Learner_activity_completions',
		description: activityTool,
		properties: { userId: { type: 'number', description: 'Numeric ID of the learner, e.g. 42' } },
	},
	feed: {
		name: 'Course_completions',
		description: feedTool,
		properties: {
			contentId: { type: 'number', description: 'Numeric ID of the course, e.g. 101' },
		},
	},
	attendance: {
		name: 'Session_attendance_report',
		description: attendanceTool,
		properties: {
			contentId: {
				type: 'number',
				description: 'Numeric ID of the Live Learning content, e.g. 201',
			},
		},
	},
	bookmark: {
		name: 'Bookmark_content',
		description: bookmarkTool,
		properties: {
			username: { type: 'string', description: 'Login name of the learner, e.g. jane.doe' },
			contentId: { type: 'number', description: 'Numeric ID of the content to bookmark' },
			contentType: {
				type: 'string',
				description: 'Type of that content: course, live learning, video or resource',
			},
		},
	},
} as const;
type ToolKey = keyof typeof TOOLS;
/** A tool's JSON schema as a provider receives it: every $fromAI key is required. */
const schemaOf = (key: ToolKey) =>
	expect.objectContaining({
		type: 'object',
		properties: TOOLS[key].properties,
		required: Object.keys(TOOLS[key].properties),
	});

// the package's parts must exist: a missing one fails this file at load (landed() throws)
landed();

/**
 * n8n 2.x lets the agent continue after a failing tool node (the error becomes the tool result);
 * n8n 1.x (seen on 1.123.81) stops the workflow there unless the tool node continues on error.
 */
const TOOL_ERRORS_REACH_THE_MODEL = Number(N8N_VERSION.split('.')[0]) >= 2;

export function agentSuite(ctx: StackContext): void {
	describe('the action node as an AI tool (agent and MCP) in real n8n', () => {
		let api: Api;
		let learner: { id: number; username: string };
		const control = () => ctx.stack.sandbox!.control;

		/** The demo workflow JSON, optionally as a copy with other ids and Chat Trigger options. */
		function demo(id: string): WorkflowJson {
			const workflow = demoWorkflows().find((w) => w.id === id);
			if (!workflow) throw new Error(`demo workflow ${id} is missing`);
			return workflow;
		}

		beforeAll(async () => {
			const sandbox = ctx.stack.sandbox!;
			// The demo's Learning Platform credential id, for a fresh API user of its own.
			const user = await sandbox.control.issueRefreshToken('e2e-agent');
			await ctx.stack.host.importCredentials([
				sandboxCredential('LpDemoCredential', 'Learning Platform (sandbox)', user),
				aiCredential(sandbox.url),
			]);
			const lastNode = structuredClone(demo(HR_ASSISTANT.workflowId));
			lastNode.id = 'LpAgentLastNode';
			lastNode.name = 'e2e: HR assistant answering with the last node';
			const trigger = lastNode.nodes[0] as { webhookId: string; parameters: { options: object } };
			trigger.webhookId = 'b7d0c6a2-91e4-4f55-8a1b-3c2d4e5f6a01';
			trigger.parameters.options = { responseMode: 'lastNode' };
			// and the model through Chat Completions, the node's other API
			const model = lastNode.nodes.find((n) => n.name === HR_ASSISTANT.modelNode) as {
				parameters: Record<string, unknown>;
			};
			model.parameters.responsesApiEnabled = false;
			await ctx.stack.host.importWorkflows([
				{ ...demo(HR_ASSISTANT.workflowId), active: false },
				{ ...demo(HR_MCP.workflowId), active: false },
				{ ...lastNode, active: false },
			]);
			for (const id of [HR_ASSISTANT.workflowId, HR_MCP.workflowId, lastNode.id])
				await ctx.client.activate(id);
			// an API user of the test's own, to read what the platform holds independently of n8n
			api = await Api.login(sandbox as unknown as SandboxHandle);
			learner = (await demoData(ctx.stack)).activeLearners[40];
		});

		/** The model requests of one chat exchange, and the exchange's stored execution. */
		async function chat(
			url: string,
			workflowId: string,
			message: string,
		): Promise<{ answer: ChatAnswer; requests: ChatRequestEntry[]; execution: ExecutionSummary }> {
			await control().clearChatRequests();
			await control().clearRequests();
			const before = (await ctx.client.listExecutions({ workflowId })).length;
			const answer = await sendChatMessage(url, message);
			const executions = await ctx.client.waitForExecutions(workflowId, before + 1, 120_000);
			const requests = await control().chatRequests();
			return { answer, requests, execution: executions[0] };
		}

		const toolOutputs = (entry: ChatRequestEntry) =>
			entry.turns.filter((t): t is Extract<Turn, { role: 'tool' }> => t.role === 'tool');

		test('a chat message runs the agent: the model gets the tools, the call reaches the API, the result reaches the model, the answer reaches the chat', async () => {
			const userId = learner.id;
			const { answer, requests, execution } = await chat(
				chatUrl(ctx.stack),
				HR_ASSISTANT.workflowId,
				`Which activities has learner ${userId} completed?`,
			);
			expect(answer.status).toBe(200);
			// 1. model call: streamed (the trigger streams), every tool with its name and schema
			expect(requests).toHaveLength(2);
			const [first, second] = requests;
			expect(requests.map((r) => r.api)).toEqual(['responses', 'responses']);
			expect(first.stream).toBe(true);
			expect(first.body).toMatchObject({ model: 'scripted-hr-assistant' });
			expect(first.tools.map((t) => t.name).sort()).toEqual(
				Object.values(TOOLS)
					.map((t) => t.name)
					.sort(),
			);
			for (const key of Object.keys(TOOLS) as ToolKey[]) {
				const tool = first.tools.find((t) => t.name === TOOLS[key].name)!;
				expect({ key, description: tool.description }).toEqual({
					key,
					description: TOOLS[key].description,
				});
				expect(tool.parameters).toEqual(schemaOf(key));
			}
			expect(first.turns.at(-1)).toEqual({
				role: 'user',
				text: `Which activities has learner ${userId} completed?`,
			});
			expect(first.reply).toEqual({
				kind: 'tool_calls',
				calls: [
					expect.objectContaining({ name: TOOLS.activity.name, arguments: `{"userId":${userId}}` }),
				],
			});
			const callId = first.reply!.kind === 'tool_calls' ? first.reply!.calls[0].id : '';

			// 2. the argument reached the platform: a report submitted for that learner, then polled
			const calls = await control().requests({ path: '/activitycompletions' });
			expect(calls[0].query).toMatchObject({ userId: String(userId) });
			expect(calls[0].query).not.toHaveProperty('requestid');
			expect(calls.at(-1)!.status).toBe(200);

			// 3. the tool result is in the next model call, with the platform's records
			const expected = await api.report('activitycompletions', { userId });
			expect(expected.length).toBeGreaterThan(0); // a learner with records, or the test proves little
			const [result] = toolOutputs(second);
			expect(result.callId).toBe(callId);
			const items = JSON.parse(result.output) as Array<Record<string, unknown>>;
			expect(items).toHaveLength(expected.length);
			expect(items.map((i) => i.activityname)).toEqual(expected.map((r) => r.activityname));

			// 4. the model's final text is the chat's answer, and n8n stored a successful run
			expect(second.reply).toEqual({ kind: 'text', text: answer.output });
			expect(answer.output).toMatch(
				new RegExp(`^Learner ${userId} has ${expected.length} activity completions`),
			);
			expect(answer.chunks.map((c) => c.type)).toContain('item');
			expect(execution.status).toBe('success');
			const toolRuns = execution.data!.resultData!.runData!['Learner activity completions'];
			expect(toolRuns).toHaveLength(1);
		});

		test('an API error in a tool: on n8n 2.x the model gets it as the tool result and the run succeeds; on 1.x the run stops', async () => {
			const { answer, requests, execution } = await chat(
				chatUrl(ctx.stack, 'b7d0c6a2-91e4-4f55-8a1b-3c2d4e5f6a01'),
				'LpAgentLastNode',
				'Bookmark course 102 for nobody.here',
			);
			const [first, second] = requests;
			expect(first.api).toBe('chat.completions');
			expect(first.stream).toBe(false); // lastNode: the agent does not stream
			// the same tools, in Chat Completions' shape
			expect(first.tools.find((t) => t.name === TOOLS.bookmark.name)?.parameters).toEqual(
				schemaOf('bookmark'),
			);
			expect(first.reply).toEqual({
				kind: 'tool_calls',
				calls: [
					expect.objectContaining({
						name: TOOLS.bookmark.name,
						arguments: JSON.stringify({
							username: 'nobody.here',
							contentId: 102,
							contentType: 'course',
						}),
					}),
				],
			});
			const bookmarkCalls = await control().requests({ path: '/bookmarks/' });
			expect(bookmarkCalls.map((r) => [r.method, r.status])).toEqual([['POST', 404]]);

			if (!TOOL_ERRORS_REACH_THE_MODEL) {
				// n8n 1.x: the failed tool ends the run; the model is not asked again
				expect(requests).toHaveLength(1);
				expect(answer.status).toBe(500);
				expect(execution.status).toBe('error');
				expect(executionError(execution)).toContain('nobody.here');
				return;
			}
			expect(answer.status).toBe(200);
			expect(requests).toHaveLength(2);
			const [result] = toolOutputs(second);
			const [item] = JSON.parse(result.output) as Array<{ error: string }>;
			expect(item.error).toContain('nobody.here');
			expect(answer.output).toBe(`The tool reported an error: ${item.error}`);

			expect(execution.status).toBe('success');
			expect(execution.data?.resultData?.error).toBeUndefined();
			const [toolRun] = execution.data!.resultData!.runData!['Bookmark content'];
			expect(toolRun.error?.message).toBe(item.error);
		});

		describe('the MCP Server Trigger with the official MCP client', () => {
			let client: Client;
			beforeAll(async () => {
				client = new Client({ name: 'lp-e2e', version: '1.0.0' });
				await client.connect(
					new StreamableHTTPClientTransport(new URL(mcpUrl(ctx.stack)), { fetch: fetchN8n }),
				);
			});
			afterAll(async () => {
				await client?.close();
			});
			const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
				(result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('');

			test('listTools shows the package tools with their $fromAI parameters', async () => {
				const { tools } = await client.listTools();
				expect(tools.map((t) => t.name).sort()).toEqual(
					Object.values(TOOLS)
						.map((t) => t.name)
						.sort(),
				);
				for (const key of Object.keys(TOOLS) as ToolKey[]) {
					const tool = tools.find((t) => t.name === TOOLS[key].name)!;
					expect(tool.description).toBe(TOOLS[key].description);
					expect(tool.inputSchema).toEqual(schemaOf(key));
				}
			});

			test('callTool bookmarks a course (the platform confirms) and reads completions', async () => {
				await control().clearRequests();
				const bookmark = await client.callTool({
					name: TOOLS.bookmark.name,
					arguments: { username: learner.username, contentId: 103, contentType: 'course' },
				});
				expect(bookmark.isError).toBeFalsy();
				const [created] = JSON.parse(text(bookmark)) as Array<Record<string, unknown>>;
				// the platform answers a repeated bookmark with the existing one: same id
				const again = await api.send('POST', api.r.bookmark, {
					username: learner.username,
					contentId: 103,
					contentType: 'course',
				});
				expect(again.json.bookmark).toMatchObject({
					id: created.id,
					userid: learner.id,
					bookmarkable_id: 103,
				});
				expect(
					(await control().requests({ path: '/bookmarks/', username: 'e2e-agent' })).map(
						(r) => r.status,
					),
				).toEqual([200]);

				const feed = await client.callTool({
					name: TOOLS.feed.name,
					arguments: { contentId: 101 },
				});
				expect(feed.isError).toBeFalsy();
				const items = JSON.parse(text(feed)) as Array<Record<string, unknown>>;
				const expected = (await api.walk({ contentId: 101, includeEnrolments: true, limit: 500 }))
					.records;
				// the demo's tool reads 20 records (its Limit) and says that more exist
				expect(expected.length).toBeGreaterThan(20);
				expect(items).toHaveLength(21);
				expect(items.slice(0, 20).map((r) => r.completionid)).toEqual(
					expected.slice(0, 20).map((r) => r.completionid),
				);
				expect(items[20].note).toMatch(/^Showing the first 20 records; more exist\./);
				console.log(
					`MCP: a feed read of course 101 gave the model ${items.length} items, ${text(feed).length} characters (${expected.length} records exist)`,
				);
			});

			test('an invalid argument, and an API error, come back as isError with a message saying why', async () => {
				await control().clearRequests();
				const invalid = await client.callTool({
					name: TOOLS.bookmark.name,
					arguments: {
						username: learner.username,
						contentId: 'not a number',
						contentType: 'course',
					},
				});
				expect(invalid.isError).toBe(true);
				// n8n checks the arguments against the $fromAI schema before the node runs
				expect(text(invalid)).toMatch(/did not match expected schema[\s\S]*contentId/);
				expect(await control().requests({ path: '/bookmarks/' })).toEqual([]);

				const unknown = await client.callTool({
					name: TOOLS.bookmark.name,
					arguments: { username: 'nobody.here', contentId: 103, contentType: 'course' },
				});
				expect(unknown.isError).toBe(true);
				expect(text(unknown)).toContain('nobody.here');
				expect((await control().requests({ path: '/bookmarks/' })).map((r) => r.status)).toEqual([
					404,
				]);

				// a 422: the platform's sentence ends in a full stop, and ours follows after one space.
				// The prefix is n8n's: its tool runner wraps the node's error and adds "Details:", the
				// MCP Server Trigger writes `${error.name}: ${error.message}` ("NodeOperationError" on
				// 2.x, "Error" on 1.x).
				const rejected = await client.callTool({
					name: TOOLS.bookmark.name,
					arguments: { username: learner.username, contentId: 103, contentType: 'podcast' },
				});
				expect(rejected.isError).toBe(true);
				expect(text(rejected).replace(/^(NodeOperationError|Error): /, '')).toBe(
					'The learning platform could not process the request (422): The selected contentType is invalid. Allowed values: course, live learning, video, resource.\n\nDetails: contentType: The selected contentType is invalid. Allowed values: course, live learning, video, resource. The server rejected the values sent: change them accordingly and run the node again.',
				);
				expect(text(rejected)).not.toMatch(/\.\s*\./);
			});
		});
	});
}
