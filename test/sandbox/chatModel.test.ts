// The scripted chat model (sandbox/chatModel.ts, rules in sandbox/chatRules.ts) over HTTP: its
// answers are read with OpenAI's own client (plain, and streamed through the client's stream
// helpers, which assemble deltas the way every OpenAI consumer does), and the SSE framing is
// checked by hand once per API.
import OpenAI from 'openai';
import { HELP_TEXT } from '../../sandbox/chatRules';
import { SCRIPTED_MODEL } from '../../sandbox';
import { http, useSandbox } from './helpers';

// Tools as n8n sends them: names from workflow node names, descriptions from the operations'
// actions, parameters from $fromAI(). The rules must not depend on these exact names.
const schema = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({
	type: 'object',
	properties,
	required,
	additionalProperties: false,
});
const TOOLS = [
	{
		name: 'Course_completions',
		description: 'Get many completions in Learning Platform',
		parameters: schema({ contentId: { type: 'number', description: 'Numeric ID of the course' } }),
	},
	{
		name: 'Learner_activity',
		description: 'Get activity completions in Learning Platform',
		parameters: schema({ userId: { type: 'number', description: 'Numeric ID of the learner' } }),
	},
	{
		name: 'Session_attendance',
		description: 'Get attendance in Learning Platform',
		parameters: schema({ contentId: { type: 'string', description: 'Live Learning content ID' } }),
	},
	{
		name: 'Bookmark_content',
		description: 'Create a bookmark in Learning Platform',
		parameters: schema({
			username: { type: 'string', description: 'Login name of the learner' },
			contentId: { type: 'number', description: 'Content ID' },
			contentType: { type: 'string', enum: ['course', 'live learning', 'video', 'resource'] },
		}),
	},
];
const responsesTools = TOOLS.map((t) => ({ type: 'function' as const, strict: false, ...t }));
const completionTools = TOOLS.map((t) => ({ type: 'function' as const, function: t }));

describe('scripted chat model (OpenAI-compatible, /openai/v1)', () => {
	const ctx = useSandbox({ demoData: false });
	let client: OpenAI;
	beforeAll(() => {
		client = new OpenAI({ apiKey: 'any-key', baseURL: `${ctx.sb.url}/openai/v1`, maxRetries: 0 });
	});
	beforeEach(() => ctx.sb.control.clearChatRequests());

	const ask = async (text: string) =>
		await client.responses.create({
			model: SCRIPTED_MODEL,
			input: [{ role: 'user', content: text }],
			tools: responsesTools,
		});
	const calls = (r: OpenAI.Responses.Response) =>
		r.output
			.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
			.map((o) => ({ name: o.name, args: JSON.parse(o.arguments) as unknown }));

	it('lists models and refuses a request without a bearer token the way OpenAI does', async () => {
		const models = await client.models.list();
		expect(models.data.map((m) => m.id)).toContain(SCRIPTED_MODEL);

		const refused = await http('POST', `${ctx.sb.url}/openai/v1/responses`, {
			body: { model: 'x', input: 'hi' },
		});
		expect(refused.status).toBe(401);
		expect(refused.json.error).toMatchObject({ code: 'invalid_api_key' });
	});

	it('picks the tool by keywords in its name and description, with arguments from its schema', async () => {
		expect(calls(await ask('Bookmark course 102 for jane.doe please'))).toEqual([
			{
				name: 'Bookmark_content',
				args: { username: 'jane.doe', contentId: 102, contentType: 'course' },
			},
		]);
		// two tools mention completions: the one sharing words with the question wins
		expect(calls(await ask('Which activities has learner 42 completed?'))).toEqual([
			{ name: 'Learner_activity', args: { userId: 42 } },
		]);
		expect(calls(await ask('Who has finished course 101?'))).toEqual([
			{ name: 'Course_completions', args: { contentId: 101 } },
		]);
		// a string-typed property gets a string
		expect(calls(await ask('Show the attendance of session 201'))).toEqual([
			{ name: 'Session_attendance', args: { contentId: '201' } },
		]);
		// one call per learner: parallel tool calls
		expect(calls(await ask('Bookmark the video 305 for ann.lee and "bo.chan"'))).toEqual([
			{
				name: 'Bookmark_content',
				args: { username: 'bo.chan', contentId: 305, contentType: 'video' },
			},
			{
				name: 'Bookmark_content',
				args: { username: 'ann.lee', contentId: 305, contentType: 'video' },
			},
		]);
	});

	it('answers in text when no intent or no offered tool fits', async () => {
		const hello = await ask('Hello there');
		expect(hello.output_text).toBe(HELP_TEXT);
		const noTool = await client.responses.create({
			model: SCRIPTED_MODEL,
			input: 'Bookmark course 1 for a.b',
			tools: responsesTools.filter((t) => !/bookmark/i.test(t.description)),
		});
		expect(noTool.output_text).toMatch(/^I have no tool for bookmarks here/);
	});

	it('builds the final answer from tool results, and reports a tool error (Responses API)', async () => {
		const question = {
			role: 'user' as const,
			content: 'Which activities has learner 42 completed?',
		};
		const call = { type: 'function_call' as const, name: 'Learner_activity', call_id: 'call_1' };
		const records = [
			{ activityname: 'Fire safety quiz', activitycompletionstatus: 'Completed' },
			{ activityname: 'Evacuation video', activitycompletionstatus: 'Completed' },
		];
		const answer = await client.responses.create({
			model: SCRIPTED_MODEL,
			tools: responsesTools,
			input: [
				question,
				{ ...call, arguments: '{"userId":42}' },
				{ type: 'function_call_output', call_id: 'call_1', output: JSON.stringify(records) },
			],
		});
		expect(answer.output_text).toBe(
			'Learner 42 has 2 activity completions: Fire safety quiz (Completed); Evacuation video (Completed).',
		);

		const failed = await client.responses.create({
			model: SCRIPTED_MODEL,
			tools: responsesTools,
			input: [
				question,
				{ ...call, arguments: '{"userId":42}' },
				{
					type: 'function_call_output',
					call_id: 'call_1',
					// what n8n's agent hands back for a tool node that threw
					output: JSON.stringify([{ error: 'No learner with ID 42 (404: User not found.)' }]),
				},
			],
		});
		expect(failed.output_text).toBe(
			'The tool reported an error: No learner with ID 42 (404: User not found.)',
		);
		expect(calls(failed)).toEqual([]);

		// a tool node that output no items reaches the model as `""`
		const empty = await client.responses.create({
			model: SCRIPTED_MODEL,
			tools: responsesTools,
			input: [
				question,
				{ ...call, arguments: '{"userId":42}' },
				{ type: 'function_call_output', call_id: 'call_1', output: '""' },
			],
		});
		expect(empty.output_text).toBe('Learner 42 has 0 activity completions.');
	});

	it('streams Responses events that OpenAI’s client assembles into the same answer', async () => {
		const stream = client.responses.stream({
			model: SCRIPTED_MODEL,
			input: [{ role: 'user', content: 'Bookmark course 102 for jane.doe' }],
			tools: responsesTools,
		});
		const types: string[] = [];
		stream.on('event', (e) => types.push(e.type));
		const final = await stream.finalResponse();
		expect(calls(final)).toEqual([
			{
				name: 'Bookmark_content',
				args: { username: 'jane.doe', contentId: 102, contentType: 'course' },
			},
		]);
		expect(types[0]).toBe('response.created');
		expect(types).toContain('response.function_call_arguments.delta');
		expect(types.at(-1)).toBe('response.completed');

		// framing by hand: every block is `event: <type>` + `data: {"type": <type>, ...}`
		const raw = await http('POST', `${ctx.sb.url}/openai/v1/responses`, {
			token: 'k',
			body: { model: 'm', stream: true, input: 'Hello' },
		});
		expect(raw.headers['content-type']).toMatch(/^text\/event-stream/);
		const blocks = raw.text.trim().split('\n\n');
		for (const block of blocks) {
			const [event, data] = block.split('\n');
			expect(event).toMatch(/^event: response\./);
			expect(JSON.parse(data.replace(/^data: /, ''))).toMatchObject({
				type: event.slice('event: '.length),
			});
		}
		const deltas = blocks
			.map((b) => JSON.parse(b.split('\n')[1].slice(6)) as { type: string; delta?: string })
			.filter((d) => d.type === 'response.output_text.delta');
		expect(deltas.length).toBeGreaterThan(1); // the text arrives in pieces
		expect(deltas.map((d) => d.delta).join('')).toBe(HELP_TEXT);
	});

	it('speaks Chat Completions, plain and streamed with tool-call deltas and [DONE]', async () => {
		const messages = [{ role: 'user' as const, content: 'Bookmark course 102 for jane.doe' }];
		const plain = await client.chat.completions.create({
			model: SCRIPTED_MODEL,
			messages,
			tools: completionTools,
		});
		expect(plain.choices[0].finish_reason).toBe('tool_calls');
		const toolCall = plain.choices[0].message.tool_calls![0];
		expect(toolCall.type === 'function' && toolCall.function.name).toBe('Bookmark_content');

		const stream = client.chat.completions.stream({
			model: SCRIPTED_MODEL,
			messages,
			tools: completionTools,
			stream_options: { include_usage: true },
		});
		const final = await stream.finalChatCompletion();
		const streamed = final.choices[0].message.tool_calls![0];
		expect(streamed.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual({
			username: 'jane.doe',
			contentId: 102,
			contentType: 'course',
		});
		expect(final.usage?.total_tokens).toBeGreaterThan(0);

		// the tool result comes back as a `tool` message; the answer is text
		const answer = await client.chat.completions.create({
			model: SCRIPTED_MODEL,
			tools: completionTools,
			messages: [
				...messages,
				{ role: 'assistant', content: null, tool_calls: [toolCall] },
				{
					role: 'tool',
					tool_call_id: toolCall.id,
					content: JSON.stringify([
						{ id: 7, bookmarkable_id: 102, bookmarkable_type: 'course', username: 'jane.doe' },
					]),
				},
			],
		});
		expect(answer.choices[0].message.content).toBe(
			'Bookmarked content 102 for jane.doe (bookmark 7).',
		);

		const raw = await http('POST', `${ctx.sb.url}/openai/v1/chat/completions`, {
			token: 'k',
			body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'Hello' }] },
		});
		const events = raw.text.trim().split('\n\n');
		expect(events.every((e) => e.startsWith('data: '))).toBe(true);
		expect(events.at(-1)).toBe('data: [DONE]');
		const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
		expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
		expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(HELP_TEXT);
		expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
	});

	it('keeps every request whole for the control API, until cleared', async () => {
		await ask('Which activities has learner 42 completed?');
		await client.chat.completions.create({
			model: SCRIPTED_MODEL,
			messages: [{ role: 'user', content: 'Hello' }],
		});
		const log = await ctx.sb.control.chatRequests();
		expect(log.map((e) => [e.api, e.path, e.status])).toEqual([
			['responses', '/responses', 200],
			['chat.completions', '/chat/completions', 200],
		]);
		const [first] = log;
		expect(first.body).toMatchObject({ model: SCRIPTED_MODEL, tools: responsesTools });
		expect(first.tools).toEqual(TOOLS);
		expect(first.turns).toEqual([
			{ role: 'user', text: 'Which activities has learner 42 completed?' },
		]);
		expect(first.reply).toEqual({
			kind: 'tool_calls',
			calls: [
				{
					id: expect.stringMatching(/^call_/),
					name: 'Learner_activity',
					arguments: '{"userId":42}',
				},
			],
		});
		expect(await ctx.sb.control.chatRequests({ api: 'chat.completions' })).toHaveLength(1);
		expect(await ctx.sb.control.clearChatRequests()).toEqual({ cleared: 2 });
		expect(await ctx.sb.control.chatRequests()).toEqual([]);
	});
});
