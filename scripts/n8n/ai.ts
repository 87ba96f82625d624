// The AI side of the demo and the e2e suite: the OpenAI credential that points n8n's OpenAI Chat
// Model at the sandbox's scripted model (sandbox/chatModel.ts), the two AI demo workflows' fixed
// ids and URLs, and a client for n8n's Chat Trigger over HTTP (what the chat widget sends).
import { SCRIPTED_MODEL } from '../../sandbox/chatModel';
import { fetchN8n } from './fetch';
import type { CredentialImport } from './n8n';
import type { Stack } from './stack';

export { SCRIPTED_MODEL };

export const AI_CREDENTIAL_ID = 'LpDemoOpenAi';
export const AI_CREDENTIAL_NAME = 'Scripted chat model (sandbox)';

/** demo/workflows/hr-assistant.json: Chat Trigger -> AI Agent -> Learning Platform tools */
export const HR_ASSISTANT = {
	workflowId: 'LpDemoHrAssist0',
	chatWebhookId: '5e1c7a3b-2d4f-4b8e-9a6c-1f2e3d4c5b01',
	agentNode: 'HR assistant',
	modelNode: 'OpenAI Chat Model',
} as const;

/** demo/workflows/hr-mcp-server.json: MCP Server Trigger -> the same tools */
export const HR_MCP = { workflowId: 'LpDemoHrMcp0000', path: 'learning-platform' } as const;

/**
 * n8n's `openAiApi` credential (n8n-nodes-base OpenAiApi.credentials: `url` is its Base URL field)
 * for the scripted model. The key is a placeholder: the sandbox accepts any bearer token, and
 * nothing reaches OpenAI.
 */
export function aiCredential(sandboxUrl: string, id = AI_CREDENTIAL_ID): CredentialImport {
	return {
		id,
		name: id === AI_CREDENTIAL_ID ? AI_CREDENTIAL_NAME : id,
		type: 'openAiApi',
		data: {
			apiKey: 'sandbox-scripted-model',
			organizationId: '',
			url: `${sandboxUrl}/openai/v1`,
			header: false,
		},
	};
}

/**
 * The demo's OpenAI credential when it must be imported: missing, or pointing at another sandbox
 * address (the API port can change between starts); undefined when the stored one is right.
 */
export async function aiCredentialUpdate(
	stack: Stack,
	existingIds: string[],
): Promise<CredentialImport | undefined> {
	const sandbox = stack.sandbox;
	if (!sandbox) throw new Error('the sandbox API is not running');
	const wanted = aiCredential(sandbox.url);
	if (existingIds.includes(AI_CREDENTIAL_ID)) {
		const stored = await stack.client
			.rest<{
				data?: { url?: string };
			}>('GET', `/credentials/${AI_CREDENTIAL_ID}?includeData=true`)
			.catch(() => undefined);
		if (stored?.data?.url === wanted.data.url) return undefined;
	}
	return wanted;
}

/** Production chat URL of a Chat Trigger (`public: true`, workflow active). */
export function chatUrl(stack: Stack, webhookId: string = HR_ASSISTANT.chatWebhookId): string {
	return `${stack.main.url}/webhook/${webhookId}/chat`;
}

/** Production MCP endpoint of an MCP Server Trigger (version 2: one URL for both transports). */
export function mcpUrl(stack: Stack, path: string = HR_MCP.path): string {
	return `${stack.main.url}/mcp/${path}`;
}

export interface ChatAnswer {
	status: number;
	/** the answer text: `output` of the last node (lastNode mode) or the streamed items joined */
	output: string;
	/** streaming mode: every chunk n8n sent (`{type: begin|item|end|error, content?, metadata}`) */
	chunks: Array<{ type: string; content?: string; metadata?: Record<string, unknown> }>;
	raw: string;
}

/**
 * Sends one chat message as n8n's chat widget does (`{action: 'sendMessage', sessionId,
 * chatInput}`) and reads the answer in either response mode: one JSON object (`lastNode`) or
 * newline-delimited JSON chunks (`streaming`).
 */
export async function sendChatMessage(
	url: string,
	chatInput: string,
	sessionId = `session-${Date.now()}`,
	timeoutMs = 300_000,
): Promise<ChatAnswer> {
	const response = await fetchN8n(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', accept: 'application/json' },
		body: JSON.stringify({ action: 'sendMessage', sessionId, chatInput }),
		signal: AbortSignal.timeout(timeoutMs),
	});
	const raw = await response.text();
	const chunks: ChatAnswer['chunks'] = [];
	for (const line of raw.split('\n')) {
		const trimmed = line.trim();
		if (!trimmed) continue;
		try {
			const parsed = JSON.parse(trimmed) as ChatAnswer['chunks'][number] & { output?: string };
			if (typeof parsed.type === 'string') chunks.push(parsed);
			else if (typeof parsed.output === 'string')
				return { status: response.status, output: parsed.output, chunks, raw };
		} catch {
			// a line that is not JSON: part of an error page; `raw` keeps it
		}
	}
	const output = chunks
		.filter((c) => c.type === 'item' && typeof c.content === 'string')
		.map((c) => c.content)
		.join('');
	return { status: response.status, output, chunks, raw };
}
