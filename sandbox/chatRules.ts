/**
 * The scripted chat model's decisions: pure functions from a conversation and the tools the request
 * offers to one reply (tool calls or text). No randomness, no clock: the same request always gets
 * the same answer, so tests can predict it from what the model received.
 *
 * Rules, applied to the conversation after its last user message:
 * 1. Tool results present (the agent ran the tools we asked for) -> a text answer built from them:
 *    an error result (`[{"error": ...}]`, or text starting with "Error") reads
 *    `The tool reported an error: <text>`; a bookmark reads `Bookmarked content <id> for <username>
 *    (bookmark <id>).`; anything else `<subject> has <n> <noun>: <first five labels> (and <k> more).`
 * 2. Otherwise the last user message picks an intent by keyword, first match wins:
 *    bookmark -> attendance/attended/session -> report -> completion/completed/finished.
 *    The tool is chosen among the offered ones by its name and description (never by n8n's
 *    generated names): the intent's keyword must appear in them; ties go to the tool sharing more
 *    words with the message, then to the first offered.
 * 3. Arguments are built from the tool's JSON schema, property by property, from its name and
 *    description: a username (`jane.doe`, `learner042`, a quoted name), a user id (`learner 42`,
 *    `user 42`), a content id (`course 101`, `content 7`, or the first free number), a content type
 *    (`course`, `live learning`, `video`, `resource`), a limit (`last/top/first N`), an ISO date,
 *    booleans named in the message, enums by mention. Properties it cannot fill are left out unless
 *    required (then a typed empty value). Several usernames with a username property -> one call
 *    per username (parallel tool calls).
 * 4. No intent, or no matching tool -> a text answer saying what it can do.
 */

export interface ToolSpec {
	name: string;
	description: string;
	/** JSON schema of the arguments (an object schema) */
	parameters: JsonSchema;
}
export interface JsonSchema {
	type?: string | string[];
	properties?: Record<string, JsonSchema>;
	required?: string[];
	description?: string;
	enum?: unknown[];
	default?: unknown;
	anyOf?: JsonSchema[];
}

/** One message of the conversation, whatever API it came through. */
export type Turn =
	| { role: 'system' | 'user'; text: string }
	| { role: 'assistant'; text: string; toolCalls: ToolCall[] }
	| { role: 'tool'; callId: string; output: string };

export interface ToolCall {
	id: string;
	name: string;
	/** the arguments as a JSON string, as OpenAI sends them */
	arguments: string;
}

export type Decision =
	| { kind: 'tool_calls'; calls: Array<{ name: string; args: Record<string, unknown> }> }
	| { kind: 'text'; text: string };

const INTENTS: Array<{ intent: string; message: RegExp; tool: RegExp }> = [
	{ intent: 'bookmark', message: /\bbookmark/i, tool: /bookmark/i },
	{ intent: 'attendance', message: /\b(attendance|attended|session)/i, tool: /attendance/i },
	{ intent: 'report', message: /\breport/i, tool: /report/i },
	{
		intent: 'completion',
		message: /\b(completion|completed|complete|finished|done)\b|\bcompletions\b/i,
		tool: /completion/i,
	},
];

export const HELP_TEXT =
	'I can look up completions and attendance and create bookmarks in the learning platform. ' +
	"Ask me, for example: 'Which activities has learner 42 completed?' or " +
	"'Bookmark course 102 for jane.doe'.";

export function decide(turns: Turn[], tools: ToolSpec[]): Decision {
	const lastUser = turns.map((t) => t.role).lastIndexOf('user');
	const userText = lastUser >= 0 ? (turns[lastUser] as { text: string }).text : '';
	const after = turns.slice(lastUser + 1);
	const results = after.filter((t): t is Extract<Turn, { role: 'tool' }> => t.role === 'tool');
	if (results.length) return { kind: 'text', text: answerFromResults(after, results) };

	const intent = INTENTS.find((i) => i.message.test(userText));
	if (!intent) return { kind: 'text', text: HELP_TEXT };
	const tool = pickTool(tools, intent.tool, userText);
	if (!tool)
		return {
			kind: 'text',
			text: `I have no tool for ${intent.intent}s here (offered: ${tools.map((t) => t.name).join(', ') || 'none'}).`,
		};
	const facts = extractFacts(userText);
	const props = tool.parameters.properties ?? {};
	const usernameKey = Object.keys(props).find((k) => kindOf(k, props[k]) === 'username');
	const usernames = usernameKey && facts.usernames.length > 1 ? facts.usernames : [undefined];
	return {
		kind: 'tool_calls',
		calls: usernames.map((username) => ({
			name: tool.name,
			args: buildArguments(tool.parameters, {
				...facts,
				usernames: username ? [username] : facts.usernames,
			}),
		})),
	};
}

function words(text: string): Set<string> {
	return new Set(
		text
			.toLowerCase()
			.split(/[^a-z0-9]+/)
			.filter((w) => w.length >= 4)
			.map((w) => w.replace(/(ies|s)$/, '')),
	);
}

function pickTool(tools: ToolSpec[], keyword: RegExp, message: string): ToolSpec | undefined {
	const asked = words(message);
	let best: { tool: ToolSpec; score: number } | undefined;
	for (const tool of tools) {
		const text = `${tool.name.replace(/_/g, ' ')} ${tool.description}`;
		if (!keyword.test(text)) continue;
		const score = [...words(text)].filter((w) => asked.has(w)).length;
		if (!best || score > best.score) best = { tool, score };
	}
	return best?.tool;
}

export interface Facts {
	usernames: string[];
	userId?: number;
	contentId?: number;
	numbers: number[];
	contentType?: string;
	limit?: number;
	date?: string;
	text: string;
}

const CONTENT_WORDS = '(?:course|content|session|live learning|video|resource|activity|module)';

export function extractFacts(text: string): Facts {
	const usernames = new Set<string>();
	for (const m of text.matchAll(/["'“‘]([a-z][\w.-]*)["'”’]/gi)) usernames.add(m[1]);
	for (const m of text.matchAll(/\b([a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+)\b/gi))
		if (!/^e\.g$|^i\.e$/i.test(m[1])) usernames.add(m[1].replace(/@.*$/, ''));
	for (const m of text.matchAll(/\b((?:learner|user)[_-]?\d+)\b/gi)) usernames.add(m[1]);
	const userId = /\b(?:learner|user)\s+(?:id\s*)?#?(\d+)\b/i.exec(text)?.[1];
	const contentId = new RegExp(`\\b${CONTENT_WORDS}\\s+(?:id\\s*)?#?(\\d+)\\b`, 'i').exec(
		text,
	)?.[1];
	const numbers = [...text.matchAll(/(?<![\w.-])(\d+)(?![\w.-]*\w)/g)].map((m) => Number(m[1]));
	const limit = /\b(?:last|top|first|latest)\s+(\d+)\b/i.exec(text)?.[1];
	const contentType = /\blive learning\b|\bsession/i.test(text)
		? 'live learning'
		: /\bvideo/i.test(text)
			? 'video'
			: /\bresource/i.test(text)
				? 'resource'
				: /\bcourse/i.test(text)
					? 'course'
					: undefined;
	return {
		usernames: [...usernames],
		userId: userId === undefined ? undefined : Number(userId),
		contentId:
			contentId !== undefined
				? Number(contentId)
				: numbers.find((n) => n !== Number(userId) && n !== Number(limit)),
		numbers,
		contentType,
		limit: limit === undefined ? undefined : Number(limit),
		date: /\b(\d{4}-\d{2}-\d{2}(?:T[\d:]+(?:Z|[+-]\d{2}:\d{2})?)?)\b/.exec(text)?.[1],
		text,
	};
}

type Kind = 'username' | 'userId' | 'contentId' | 'contentType' | 'limit' | 'date' | 'other';

function kindOf(key: string, schema: JsonSchema): Kind {
	const k = key.toLowerCase();
	const d = `${k} ${(schema.description ?? '').toLowerCase()}`;
	if (/user.?name|login/.test(k) || (/user|learner/.test(k) && !/id/.test(k))) return 'username';
	if (/(user|learner).?id/.test(k)) return 'userId';
	if (/type/.test(k) && /content|course/.test(d)) return 'contentType';
	if (/(content|course|activity).?id|^id$/.test(k)) return 'contentId';
	if (/limit|max|count/.test(k)) return 'limit';
	if (/since|date|from|after/.test(k)) return 'date';
	if (/user.?name|login name/.test(d)) return 'username';
	if (/(user|learner) id/.test(d)) return 'userId';
	if (/content id|course id/.test(d)) return 'contentId';
	return 'other';
}

function typeOf(schema: JsonSchema): string {
	const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
	return t ?? (schema.anyOf ? 'json' : 'string');
}

function coerce(value: string | number, schema: JsonSchema): unknown {
	const t = typeOf(schema);
	if (t === 'number' || t === 'integer') return Number(value);
	return String(value);
}

/** Arguments for one call, property by property (see rule 3 at the top). */
export function buildArguments(schema: JsonSchema, facts: Facts): Record<string, unknown> {
	const props = schema.properties ?? {};
	const required = new Set(schema.required ?? []);
	const args: Record<string, unknown> = {};
	for (const [key, prop] of Object.entries(props)) {
		const value = valueFor(kindOf(key, prop), key, prop, facts);
		if (value !== undefined) args[key] = value;
		else if (required.has(key)) args[key] = emptyOf(prop);
	}
	return args;
}

function valueFor(kind: Kind, key: string, prop: JsonSchema, facts: Facts): unknown {
	if (prop.enum?.length) {
		const hit = prop.enum.find((v) => facts.text.toLowerCase().includes(String(v).toLowerCase()));
		if (hit !== undefined) return hit;
		if (kind === 'contentType' && facts.contentType) {
			const typed = prop.enum.find((v) => String(v).toLowerCase() === facts.contentType);
			if (typed !== undefined) return typed;
		}
		return undefined;
	}
	if (typeOf(prop) === 'boolean') {
		const name = key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
		return facts.text.toLowerCase().includes(name) ? true : undefined;
	}
	switch (kind) {
		case 'username':
			return facts.usernames[0];
		case 'userId':
			return facts.userId === undefined ? undefined : coerce(facts.userId, prop);
		case 'contentId':
			return facts.contentId === undefined ? undefined : coerce(facts.contentId, prop);
		case 'contentType':
			return facts.contentType;
		case 'limit':
			return facts.limit === undefined ? undefined : coerce(facts.limit, prop);
		case 'date':
			return facts.date;
		default:
			return undefined;
	}
}

function emptyOf(prop: JsonSchema): unknown {
	const t = typeOf(prop);
	if (t === 'number' || t === 'integer') return 0;
	if (t === 'boolean') return false;
	if (t === 'json' || t === 'object') return {};
	if (t === 'array') return [];
	return '';
}

type Json = Record<string, unknown>;

/** What a tool result holds: the items n8n returned, or an error text. */
export function readToolOutput(output: string): { error: string } | { items: Json[] } {
	// n8n sends `""` (JSON of an empty string) when the tool node output no items
	if (output.trim() === '') return { items: [] };
	let parsed: unknown;
	try {
		parsed = JSON.parse(output);
	} catch {
		return /^\s*(\w*error\b|there was an error)/i.test(output)
			? { error: output.trim() }
			: { items: [{ text: output }] };
	}
	if (typeof parsed === 'string') return readToolOutput(parsed);
	const list = (Array.isArray(parsed) ? parsed : [parsed]).filter(
		(x): x is Json => typeof x === 'object' && x !== null,
	);
	const failed = list.find((x) => typeof x.error === 'string' || isErrorObject(x.error));
	if (failed) {
		const e = failed.error;
		return { error: typeof e === 'string' ? e : String((e as Json).message) };
	}
	return { items: list };
}

function isErrorObject(e: unknown): boolean {
	return typeof e === 'object' && e !== null && typeof (e as Json).message === 'string';
}

function answerFromResults(after: Turn[], results: Array<Extract<Turn, { role: 'tool' }>>): string {
	const calls = after.flatMap((t) => (t.role === 'assistant' ? t.toolCalls : []));
	return results
		.map((result) => {
			const call = calls.find((c) => c.id === result.callId);
			const out = readToolOutput(result.output);
			if ('error' in out) return `The tool reported an error: ${out.error}`;
			return summarise(call, out.items);
		})
		.join(' ');
}

function parseArgs(call: ToolCall | undefined): Json {
	try {
		return call ? (JSON.parse(call.arguments) as Json) : {};
	} catch {
		return {};
	}
}

const LABEL_KEYS = ['activityname', 'contentname', 'fullname', 'eventname', 'name', 'text'];
const STATUS_KEYS = ['completionstatus', 'attendancestatus', 'activitycompletionstatus', 'status'];

/** An item that is not a record: the node's `{note}` (a cut list, or no records at all). */
const isNote = (item: Json) => Object.keys(item).length === 1 && typeof item.note === 'string';

function summarise(call: ToolCall | undefined, output: Json[]): string {
	const notes = output.filter(isNote).map((item) => ` ${String(item.note)}`);
	return `${summariseRecords(
		call,
		output.filter((item) => !isNote(item)),
	)}${notes.join('')}`;
}

function summariseRecords(call: ToolCall | undefined, items: Json[]): string {
	const args = parseArgs(call);
	const first = items[0] ?? {};
	if ('bookmarkable_id' in first || 'bookmarkable_type' in first) {
		const who = first.username ?? args.username ?? `user ${String(first.userid)}`;
		return `Bookmarked content ${String(first.bookmarkable_id ?? args.contentId)} for ${String(who)} (bookmark ${String(first.id)}).`;
	}
	const what = `${call?.name ?? ''}`.toLowerCase();
	const noun = /attendance/.test(what)
		? 'attendance records'
		: /activit/.test(what)
			? 'activity completions'
			: /completion/.test(what)
				? 'completions'
				: 'records';
	const username = Object.entries(args).find(([k]) => /user.?name/i.test(k))?.[1];
	const userId = Object.entries(args).find(([k]) => /(user|learner).?id/i.test(k))?.[1];
	const contentId = Object.entries(args).find(([k]) => /content.?id/i.test(k))?.[1];
	const subject =
		username !== undefined
			? String(username)
			: userId !== undefined
				? `Learner ${String(userId)}`
				: contentId !== undefined
					? `Content ${String(contentId)}`
					: 'The platform';
	// name the learner per item only when the items are about several learners
	const learners = new Set(items.map((item) => item.username));
	const labels = items.slice(0, 5).map((item) => {
		const label = LABEL_KEYS.map((k) => item[k]).find((v) => typeof v === 'string' && v);
		const status = STATUS_KEYS.map((k) => item[k]).find((v) => typeof v === 'string' && v);
		const who = learners.size > 1 && typeof item.username === 'string' ? `${item.username} ` : '';
		return `${who}${String(label ?? JSON.stringify(item).slice(0, 40))}${status ? ` (${String(status)})` : ''}`;
	});
	const more = items.length > 5 ? ` (and ${items.length - 5} more)` : '';
	return items.length
		? `${subject} has ${items.length} ${noun}: ${labels.join('; ')}${more}.`
		: `${subject} has 0 ${noun}.`;
}
