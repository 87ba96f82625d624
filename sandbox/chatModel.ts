/**
 * A scripted, OpenAI-compatible chat model under `/openai/v1` (so an OpenAI credential's Base URL
 * is `http://<sandbox>/openai/v1`), for running n8n's AI Agent against the nodes without a real
 * model or network. Its decisions are in chatRules.ts; this file speaks the wire formats:
 *
 * - `GET /openai/v1/models`: a model list (n8n's model picker and credential test call it);
 * - `POST /openai/v1/responses`: the Responses API (n8n's OpenAI Chat Model 1.3 default), JSON or,
 *   with `stream: true`, server-sent events as OpenAI sends them (`event:` + `data:`, from
 *   `response.created` to `response.completed`; no `[DONE]`, OpenAI sends none there);
 * - `POST /openai/v1/chat/completions`: Chat Completions, JSON or SSE chunks ending with
 *   `data: [DONE]` (a usage chunk first when `stream_options.include_usage`).
 *
 * Any bearer token is accepted; a request without one gets OpenAI's 401. Every request is kept
 * whole (body as received, plus the tools and turns read from it and the reply) for the control
 * API (`GET/DELETE /__sandbox/chat/requests`). Nothing leaves the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decide, type Decision, type ToolCall, type ToolSpec, type Turn } from './chatRules';

export const CHAT_PREFIX = '/openai/v1';
export const SCRIPTED_MODEL = 'scripted-hr-assistant';

export interface ChatRequestEntry {
	/** 1, 2, ... in arrival order */
	seq: number;
	at: string;
	method: string;
	/** path below the prefix, e.g. `/responses` */
	path: string;
	api: 'responses' | 'chat.completions' | 'models' | 'unknown';
	stream: boolean;
	/** the request body exactly as parsed from JSON (null for GET) */
	body: unknown;
	/** tools offered, read from either API's shape */
	tools: ToolSpec[];
	/** the conversation, read from either API's shape */
	turns: Turn[];
	/** what the model answered (null for the model list and for refused requests) */
	reply: { kind: 'tool_calls'; calls: ToolCall[] } | { kind: 'text'; text: string } | null;
	status: number;
}

const MAX_LOG = 500;

/** The chat log of one sandbox (kept in memory only: it is test evidence, not platform state). */
export class ChatLog {
	entries: ChatRequestEntry[] = [];
	private seq = 0;
	private ids = 0;
	add(entry: Omit<ChatRequestEntry, 'seq'>): ChatRequestEntry {
		const full = { seq: ++this.seq, ...entry };
		this.entries.push(full);
		if (this.entries.length > MAX_LOG) this.entries.splice(0, this.entries.length - MAX_LOG);
		return full;
	}
	clear(): number {
		const n = this.entries.length;
		this.entries = [];
		return n;
	}
	/** ids look like OpenAI's and are unique per sandbox run */
	id(prefix: string): string {
		return `${prefix}_scripted${String(++this.ids).padStart(6, '0')}`;
	}
}

type Json = Record<string, unknown>;

function textOf(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content))
		return content
			.map((part) =>
				typeof part === 'string'
					? part
					: typeof (part as Json)?.text === 'string'
						? (part as Json).text
						: '',
			)
			.join('');
	return '';
}

/** Chat Completions `messages` -> turns. */
export function turnsFromMessages(messages: unknown): Turn[] {
	if (!Array.isArray(messages)) return [];
	return messages.map((m: Json): Turn => {
		const role = String(m.role);
		if (role === 'tool')
			return { role: 'tool', callId: String(m.tool_call_id), output: textOf(m.content) };
		if (role === 'assistant')
			return {
				role: 'assistant',
				text: textOf(m.content),
				toolCalls: ((m.tool_calls as Json[] | undefined) ?? []).map((c) => ({
					id: String(c.id),
					name: String((c.function as Json)?.name),
					arguments: String((c.function as Json)?.arguments ?? '{}'),
				})),
			};
		return { role: role === 'user' ? 'user' : 'system', text: textOf(m.content) };
	});
}

/** Responses API `instructions` + `input` -> turns (consecutive function calls form one assistant turn). */
export function turnsFromInput(instructions: unknown, input: unknown): Turn[] {
	const turns: Turn[] = [];
	if (typeof instructions === 'string' && instructions)
		turns.push({ role: 'system', text: instructions });
	if (typeof input === 'string') return [...turns, { role: 'user', text: input }];
	if (!Array.isArray(input)) return turns;
	for (const item of input as Json[]) {
		const type = item.type ?? (item.role ? 'message' : undefined);
		if (type === 'message') {
			const role = String(item.role);
			const text = textOf(item.content);
			if (role === 'assistant') turns.push({ role: 'assistant', text, toolCalls: [] });
			else turns.push({ role: role === 'user' ? 'user' : 'system', text });
		} else if (type === 'function_call') {
			const call = {
				id: String(item.call_id),
				name: String(item.name),
				arguments: String(item.arguments ?? '{}'),
			};
			const last = turns[turns.length - 1];
			if (last?.role === 'assistant' && !last.text) last.toolCalls.push(call);
			else turns.push({ role: 'assistant', text: '', toolCalls: [call] });
		} else if (type === 'function_call_output') {
			turns.push({ role: 'tool', callId: String(item.call_id), output: textOf(item.output) });
		}
	}
	return turns;
}

export function toolsFrom(tools: unknown): ToolSpec[] {
	if (!Array.isArray(tools)) return [];
	return (tools as Json[])
		.filter((t) => t.type === 'function')
		.map((t) => {
			const fn = (t.function as Json | undefined) ?? t; // Chat Completions nests, Responses does not
			return {
				name: String(fn.name),
				description: String(fn.description ?? ''),
				parameters: (fn.parameters as ToolSpec['parameters']) ?? { type: 'object', properties: {} },
			};
		});
}

function withIds(log: ChatLog, decision: Decision): NonNullable<ChatRequestEntry['reply']> {
	if (decision.kind === 'text') return decision;
	return {
		kind: 'tool_calls',
		calls: decision.calls.map((c) => ({
			id: log.id('call'),
			name: c.name,
			arguments: JSON.stringify(c.args),
		})),
	};
}

// ~4 characters a token: only so usage numbers look plausible
const tokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

/** Splits a string into a few pieces, as a streamed answer arrives. */
function pieces(s: string, size = 24): string[] {
	const out: string[] = [];
	for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
	return out.length ? out : [''];
}

function sse(res: ServerResponse) {
	res.writeHead(200, {
		'Content-Type': 'text/event-stream; charset=utf-8',
		'Cache-Control': 'no-cache',
		Connection: 'keep-alive',
	});
	return {
		event(name: string | null, data: unknown) {
			res.write(
				`${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
			);
		},
		end() {
			res.end();
		},
	};
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
	const s = JSON.stringify(body);
	res.writeHead(status, {
		'Content-Type': 'application/json',
		'Content-Length': Buffer.byteLength(s),
	});
	res.end(s);
}

const openAiError = (message: string, type: string, code: string | null = null) => ({
	error: { message, type, param: null, code },
});

// ---- Chat Completions ---------------------------------------------------------------------

function completionMessage(reply: NonNullable<ChatRequestEntry['reply']>) {
	return reply.kind === 'text'
		? { role: 'assistant', content: reply.text, refusal: null }
		: {
				role: 'assistant',
				content: null,
				refusal: null,
				tool_calls: reply.calls.map((c) => ({
					id: c.id,
					type: 'function',
					function: { name: c.name, arguments: c.arguments },
				})),
			};
}

function usageOf(body: Json, reply: NonNullable<ChatRequestEntry['reply']>) {
	const prompt = tokens(JSON.stringify(body.messages ?? body.input ?? ''));
	const completion = tokens(reply.kind === 'text' ? reply.text : JSON.stringify(reply.calls));
	return { prompt, completion };
}

function chatCompletions(
	res: ServerResponse,
	body: Json,
	reply: NonNullable<ChatRequestEntry['reply']>,
	id: string,
) {
	const model = String(body.model ?? SCRIPTED_MODEL);
	const created = Math.floor(Date.now() / 1000);
	const finish = reply.kind === 'text' ? 'stop' : 'tool_calls';
	const { prompt, completion } = usageOf(body, reply);
	const usage = {
		prompt_tokens: prompt,
		completion_tokens: completion,
		total_tokens: prompt + completion,
	};
	if (body.stream !== true) {
		return sendJson(res, 200, {
			id,
			object: 'chat.completion',
			created,
			model,
			choices: [
				{ index: 0, message: completionMessage(reply), logprobs: null, finish_reason: finish },
			],
			usage,
			system_fingerprint: 'fp_scripted',
		});
	}
	const out = sse(res);
	const chunk = (delta: Json, finishReason: string | null = null) =>
		out.event(null, {
			id,
			object: 'chat.completion.chunk',
			created,
			model,
			system_fingerprint: 'fp_scripted',
			choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
		});
	if (reply.kind === 'text') {
		chunk({ role: 'assistant', content: '', refusal: null });
		for (const p of pieces(reply.text)) chunk({ content: p });
	} else {
		chunk({ role: 'assistant', content: null, refusal: null });
		reply.calls.forEach((c, index) => {
			// the first delta of a call carries id, type and name; the arguments follow in pieces
			chunk({
				tool_calls: [
					{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } },
				],
			});
			for (const p of pieces(c.arguments, 12))
				chunk({ tool_calls: [{ index, function: { arguments: p } }] });
		});
	}
	chunk({}, finish);
	if ((body.stream_options as Json | undefined)?.include_usage === true)
		out.event(null, { id, object: 'chat.completion.chunk', created, model, choices: [], usage });
	out.event(null, '[DONE]');
	out.end();
}

// ---- Responses API ------------------------------------------------------------------------

function responseOutput(log: ChatLog, reply: NonNullable<ChatRequestEntry['reply']>): Json[] {
	if (reply.kind === 'text')
		return [
			{
				type: 'message',
				id: log.id('msg'),
				status: 'completed',
				role: 'assistant',
				content: [{ type: 'output_text', text: reply.text, annotations: [], logprobs: [] }],
			},
		];
	return reply.calls.map((c) => ({
		type: 'function_call',
		id: log.id('fc'),
		call_id: c.id,
		name: c.name,
		arguments: c.arguments,
		status: 'completed',
	}));
}

function responses(
	res: ServerResponse,
	log: ChatLog,
	body: Json,
	reply: NonNullable<ChatRequestEntry['reply']>,
	id: string,
) {
	const { prompt, completion } = usageOf(body, reply);
	const output = responseOutput(log, reply);
	const base = {
		id,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		error: null,
		incomplete_details: null,
		instructions: body.instructions ?? null,
		max_output_tokens: body.max_output_tokens ?? null,
		model: String(body.model ?? SCRIPTED_MODEL),
		parallel_tool_calls: body.parallel_tool_calls ?? true,
		previous_response_id: null,
		reasoning: { effort: null, summary: null },
		store: false,
		temperature: body.temperature ?? 1,
		text: { format: { type: 'text' } },
		tool_choice: body.tool_choice ?? 'auto',
		tools: body.tools ?? [],
		top_p: body.top_p ?? 1,
		truncation: 'disabled',
		user: null,
		metadata: {},
	};
	const done = {
		...base,
		status: 'completed',
		output,
		usage: {
			input_tokens: prompt,
			input_tokens_details: { cached_tokens: 0 },
			output_tokens: completion,
			output_tokens_details: { reasoning_tokens: 0 },
			total_tokens: prompt + completion,
		},
	};
	if (body.stream !== true) return sendJson(res, 200, done);

	const out = sse(res);
	let sequence = 0;
	const emit = (type: string, data: Json) =>
		out.event(type, { type, sequence_number: sequence++, ...data });
	emit('response.created', {
		response: { ...base, status: 'in_progress', output: [], usage: null },
	});
	emit('response.in_progress', {
		response: { ...base, status: 'in_progress', output: [], usage: null },
	});
	output.forEach((item, output_index) => {
		const itemId = String(item.id);
		if (item.type === 'function_call') {
			const args = String(item.arguments);
			emit('response.output_item.added', {
				output_index,
				item: { ...item, arguments: '', status: 'in_progress' },
			});
			for (const delta of pieces(args, 12))
				emit('response.function_call_arguments.delta', { item_id: itemId, output_index, delta });
			emit('response.function_call_arguments.done', {
				item_id: itemId,
				output_index,
				arguments: args,
			});
			emit('response.output_item.done', { output_index, item });
			return;
		}
		const text = String(((item.content as Json[])[0] as Json).text);
		const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
		emit('response.output_item.added', {
			output_index,
			item: { ...item, status: 'in_progress', content: [] },
		});
		emit('response.content_part.added', { item_id: itemId, output_index, content_index: 0, part });
		for (const delta of pieces(text))
			emit('response.output_text.delta', {
				item_id: itemId,
				output_index,
				content_index: 0,
				delta,
				logprobs: [],
			});
		emit('response.output_text.done', {
			item_id: itemId,
			output_index,
			content_index: 0,
			text,
			logprobs: [],
		});
		emit('response.content_part.done', {
			item_id: itemId,
			output_index,
			content_index: 0,
			part: { ...part, text },
		});
		emit('response.output_item.done', { output_index, item });
	});
	emit('response.completed', { response: done });
	out.end();
}

// ---- routing ------------------------------------------------------------------------------

export function handleChatModel(
	log: ChatLog,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	path: string,
	body: Json | null,
): void {
	const sub = path.slice(CHAT_PREFIX.length) || '/';
	const api: ChatRequestEntry['api'] =
		sub === '/responses'
			? 'responses'
			: sub === '/chat/completions'
				? 'chat.completions'
				: sub === '/models'
					? 'models'
					: 'unknown';
	const tools = toolsFrom(body?.tools);
	const turns =
		api === 'responses'
			? turnsFromInput(body?.instructions, body?.input)
			: turnsFromMessages(body?.messages);
	const record = (status: number, reply: ChatRequestEntry['reply']) =>
		log.add({
			at: new Date().toISOString(),
			method,
			path: sub,
			api,
			stream: body?.stream === true,
			body,
			tools,
			turns,
			reply,
			status,
		});

	const auth = /^Bearer\s+\S+/i.test(String(req.headers.authorization ?? ''));
	if (!auth) {
		record(401, null);
		return sendJson(
			res,
			401,
			openAiError(
				"You didn't provide an API key (any bearer token will do here).",
				'invalid_request_error',
				'invalid_api_key',
			),
		);
	}
	if (api === 'models' && method === 'GET') {
		record(200, null);
		const created = 1_700_000_000;
		return sendJson(res, 200, {
			object: 'list',
			data: [SCRIPTED_MODEL, 'gpt-5-mini', 'gpt-4o-mini'].map((id) => ({
				id,
				object: 'model',
				created,
				owned_by: 'sandbox',
			})),
		});
	}
	if ((api === 'responses' || api === 'chat.completions') && method === 'POST') {
		if (!body || (api === 'responses' ? body.input === undefined : !Array.isArray(body.messages))) {
			record(400, null);
			return sendJson(
				res,
				400,
				openAiError(
					`Missing required parameter: '${api === 'responses' ? 'input' : 'messages'}'.`,
					'invalid_request_error',
				),
			);
		}
		const reply = withIds(log, decide(turns, tools));
		record(200, reply);
		if (api === 'responses') return responses(res, log, body, reply, log.id('resp'));
		return chatCompletions(res, body, reply, log.id('chatcmpl'));
	}
	record(404, null);
	sendJson(
		res,
		404,
		openAiError(`Unknown request URL: ${method} ${path}.`, 'invalid_request_error', 'unknown_url'),
	);
}
