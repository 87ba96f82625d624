// HTTP client for one n8n main process: the internal REST API (owner set-up, login, API keys,
// node types) with the session cookie, and the public API (`/api/v1`, X-N8N-API-KEY) for
// workflows, credentials and executions.
import { randomUUID } from 'node:crypto';
import { fetchN8n } from './fetch';
import { scaled } from './slowness';

export interface OwnerAccount {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export const DEFAULT_OWNER: OwnerAccount = {
	email: 'demo@example.com',
	password: 'Learning-Platform-1',
	firstName: 'Demo',
	lastName: 'Owner',
};

export interface ExecutionSummary {
	id: string;
	finished: boolean;
	mode: string;
	status: string;
	startedAt: string;
	stoppedAt?: string | null;
	workflowId: string;
	retryOf?: string | null;
	data?: {
		resultData?: {
			runData?: Record<
				string,
				Array<{
					data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
					error?: { message?: string };
				}>
			>;
			error?: { message?: string; description?: string };
			lastNodeExecuted?: string;
		};
	};
	[key: string]: unknown;
}

export interface PublicationStatus {
	status: 'in_progress' | 'not_published' | 'published' | 'partial' | 'failed';
	liveVersionId: string | null;
	pendingVersionId: string | null;
	triggers: Array<{ nodeId: string; status: string; errorMessage: string | null }>;
}

export class N8nHttpError extends Error {
	constructor(
		message: string,
		readonly status: number,
		readonly body: string,
	) {
		super(message);
	}
}

/** Throws an N8nHttpError naming the call for a status >= 400 that `allow` does not list. */
function failUnlessOk(
	result: { status: number; text: string },
	call: string,
	allow: number[] = [],
	bodyChars = 500,
): void {
	if (result.status >= 400 && !allow.includes(result.status))
		throw new N8nHttpError(
			`${call} -> ${result.status}: ${result.text.slice(0, bodyChars)}`,
			result.status,
			result.text,
		);
}

export class N8nClient {
	private cookie?: string;
	/** n8n binds the session to a browser id header; any stable value works for a script. */
	private readonly browserId = randomUUID();
	apiKey?: string;

	constructor(public baseUrl: string) {}

	private async request(
		method: string,
		url: string,
		headers: Record<string, string>,
		body?: unknown,
	): Promise<{ status: number; text: string; json: unknown; response: Response }> {
		let response: Response;
		let text: string;
		for (let attempt = 1; ; attempt++) {
			try {
				response = await fetchN8n(url, {
					method,
					headers: {
						accept: 'application/json',
						...(body !== undefined ? { 'content-type': 'application/json' } : {}),
						...headers,
					},
					body: body !== undefined ? JSON.stringify(body) : undefined,
					signal: AbortSignal.timeout(scaled(120_000)),
				});
				text = await response.text();
				break;
			} catch (error) {
				// A busy n8n sometimes closes a kept-alive connection under a request ("other side
				// closed"); a read is safe to repeat, a write is not.
				if (method !== 'GET' || attempt >= 3 || (error as Error).name === 'TimeoutError')
					throw error;
				await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
			}
		}
		let json: unknown;
		try {
			json = text ? JSON.parse(text) : undefined;
		} catch {
			json = undefined;
		}
		return { status: response.status, text, json, response };
	}

	private sessionHeaders(): Record<string, string> {
		const headers: Record<string, string> = { 'browser-id': this.browserId };
		if (this.cookie) headers.cookie = this.cookie;
		return headers;
	}

	/** Internal REST API (`/rest/...`) with the owner's session. */
	async rest<T = unknown>(
		method: string,
		path: string,
		body?: unknown,
		options: { allow?: number[] } = {},
	): Promise<T> {
		const result = await this.request(
			method,
			`${this.baseUrl}/rest${path}`,
			this.sessionHeaders(),
			body,
		);
		const setCookie = result.response.headers.getSetCookie?.() ?? [];
		const auth = setCookie.find((c) => c.startsWith('n8n-auth='));
		if (auth) this.cookie = auth.split(';')[0];
		failUnlessOk(result, `${method} /rest${path}`, options.allow, 500);
		const json = result.json as { data?: T } | undefined;
		return (json && typeof json === 'object' && 'data' in json ? json.data : json) as T;
	}

	/** Public API (`/api/v1/...`) with the API key. */
	async api<T = unknown>(
		method: string,
		path: string,
		body?: unknown,
		options: { allow?: number[] } = {},
	): Promise<T> {
		if (!this.apiKey) throw new Error('no API key: call setupOwnerAndApiKey() first');
		const result = await this.request(
			method,
			`${this.baseUrl}/api/v1${path}`,
			{ 'X-N8N-API-KEY': this.apiKey },
			body,
		);
		failUnlessOk(result, `${method} /api/v1${path}`, options.allow, 800);
		return result.json as T;
	}

	/** Creates the owner account (first start) or logs in (owner already set up). */
	async setupOwner(owner: OwnerAccount = DEFAULT_OWNER): Promise<void> {
		const settings = await this.rest<{ userManagement?: { showSetupOnFirstLoad?: boolean } }>(
			'GET',
			'/settings',
		);
		if (settings?.userManagement?.showSetupOnFirstLoad === false) {
			await this.login(owner);
			return;
		}
		await this.rest('POST', '/owner/setup', owner);
		if (!this.cookie) throw new Error('owner set-up returned no session cookie');
	}

	async login(owner: OwnerAccount = DEFAULT_OWNER): Promise<void> {
		await this.rest('POST', '/login', {
			emailOrLdapLoginId: owner.email,
			password: owner.password,
		});
		if (!this.cookie) throw new Error('login returned no session cookie');
	}

	/** A public-API key with every scope the owner may grant, no expiry. */
	async createApiKey(
		label = `harness ${new Date().toISOString().slice(0, 19)} ${randomUUID().slice(0, 6)}`,
	): Promise<string> {
		const scopes = await this.rest<string[]>('GET', '/api-keys/scopes');
		const created = await this.rest<{ rawApiKey: string }>('POST', '/api-keys', {
			label: label.slice(0, 50),
			scopes,
			expiresAt: null,
		});
		this.apiKey = created.rawApiKey;
		return this.apiKey;
	}

	async setupOwnerAndApiKey(owner: OwnerAccount = DEFAULT_OWNER): Promise<string> {
		await this.setupOwner(owner);
		return this.createApiKey();
	}

	/** Node type names known to the running n8n (`/types/nodes.json`). */
	async nodeTypeNames(): Promise<string[]> {
		return (await this.types('nodes')).map((n) => n.name);
	}

	/** Credential type names known to the running n8n (`/types/credentials.json`). */
	async credentialTypeNames(): Promise<string[]> {
		return (await this.types('credentials')).map((n) => n.name);
	}

	/**
	 * The type descriptions the editor loads (`/types/nodes.json` or `/types/credentials.json`):
	 * each with its `name`, and for nodes `properties`, `version`... as the running n8n knows them.
	 */
	async types(
		kind: 'nodes' | 'credentials',
	): Promise<Array<{ name: string; [key: string]: unknown }>> {
		const result = await this.request(
			'GET',
			`${this.baseUrl}/types/${kind}.json`,
			this.sessionHeaders(),
		);
		failUnlessOk(result, `GET /types/${kind}.json`);
		return result.json as Array<{ name: string; [key: string]: unknown }>;
	}

	// ----- workflows (public API) -----

	async getWorkflow(
		id: string,
	): Promise<
		| { id: string; name: string; active: boolean; staticData?: unknown; nodes: unknown[] }
		| undefined
	> {
		const result = await this.api<{ id: string; name: string; active: boolean; nodes: unknown[] }>(
			'GET',
			`/workflows/${id}`,
			undefined,
			{ allow: [404] },
		);
		return result && (result as { id?: string }).id ? result : undefined;
	}

	async createWorkflow(workflow: {
		name: string;
		nodes: unknown[];
		connections: unknown;
		settings?: unknown;
	}): Promise<{ id: string }> {
		return this.api('POST', '/workflows', {
			name: workflow.name,
			nodes: workflow.nodes,
			connections: workflow.connections,
			settings: workflow.settings ?? { executionOrder: 'v1' },
		});
	}

	/**
	 * Activates (publishes) a workflow and waits until n8n has really registered its triggers.
	 * n8n 2.40.7 publishes through an outbox processed in the background (the public API answers
	 * before webhooks exist and before a polling trigger's first poll), so this follows
	 * `GET /rest/workflows/:id/publication-status` until it is `published`; `failed` or `partial`
	 * throws with the trigger errors (e.g. a webhook trigger whose `create` failed).
	 */
	async activate(workflowId: string, options: { timeoutMs?: number } = {}): Promise<void> {
		await this.api('POST', `/workflows/${workflowId}/activate`, {});
		await this.waitForPublication(workflowId, 'published', options.timeoutMs);
	}

	/**
	 * Publishes an edit of an active workflow as the editor's Publish does: `edit` changes the
	 * stored workflow (its nodes and connections), the public API's update re-publishes it, and
	 * this waits until the new version is live (n8n 2.x's outbox; n8n 1.x re-activates at once).
	 */
	async publishEdit(
		workflowId: string,
		edit: (workflow: { nodes: Array<Record<string, unknown>>; connections: unknown }) => void,
		options: { timeoutMs?: number } = {},
	): Promise<void> {
		const stored = await this.api<{
			name: string;
			nodes: Array<Record<string, unknown>>;
			connections: unknown;
			settings?: { executionOrder?: string };
		}>('GET', `/workflows/${workflowId}`);
		edit(stored);
		const updated = await this.api<{ activeVersionId?: string | null }>(
			'PUT',
			`/workflows/${workflowId}`,
			{
				name: stored.name,
				nodes: stored.nodes,
				connections: stored.connections,
				settings: { executionOrder: stored.settings?.executionOrder ?? 'v1' },
			},
		);
		await this.waitForPublication(workflowId, 'published', options.timeoutMs, {
			versionId: updated.activeVersionId ?? undefined,
		});
	}

	/** Deactivates (unpublishes) a workflow and waits until its triggers are gone. */
	async deactivate(workflowId: string, options: { timeoutMs?: number } = {}): Promise<void> {
		await this.api('POST', `/workflows/${workflowId}/deactivate`);
		await this.waitForPublication(workflowId, 'not_published', options.timeoutMs);
	}

	/** undefined on n8n 1.x, which has no publication status (it activates synchronously). */
	async publicationStatus(workflowId: string): Promise<PublicationStatus | undefined> {
		try {
			return await this.rest<PublicationStatus>(
				'GET',
				`/workflows/${workflowId}/publication-status`,
			);
		} catch (error) {
			if (error instanceof N8nHttpError && error.status === 404) return undefined;
			throw error;
		}
	}

	async waitForPublication(
		workflowId: string,
		wanted: 'published' | 'not_published',
		timeoutMs = 90_000,
		/** with `versionId`: published only once that version is live and none is pending */
		{ versionId }: { versionId?: string } = {},
	): Promise<PublicationStatus> {
		timeoutMs = scaled(timeoutMs);
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const status = await this.publicationStatus(workflowId);
			// n8n 1.x: the activate/deactivate call returned after the triggers were (un)registered
			if (!status)
				return { status: wanted, liveVersionId: null, pendingVersionId: null, triggers: [] };
			const thatVersion =
				versionId === undefined ||
				(status.liveVersionId === versionId && status.pendingVersionId === null);
			if (status.status === wanted && thatVersion) return status;
			if (wanted === 'published' && (status.status === 'failed' || status.status === 'partial')) {
				const errors = status.triggers
					.filter((t) => t.status === 'failed')
					.map((t) => `${t.nodeId}: ${t.errorMessage}`);
				throw new Error(
					`activating workflow ${workflowId} failed (${status.status}): ${errors.join('; ')}`,
				);
			}
			if (Date.now() > deadline)
				throw new Error(
					`workflow ${workflowId}: publication status still ${status.status} after ${timeoutMs} ms (wanted ${wanted})`,
				);
			await new Promise((resolve) => setTimeout(resolve, 250));
		}
	}

	// ----- executions -----

	/** Executions (newest first), following the cursor; `includeData` adds the run data. */
	async listExecutions(
		options: { workflowId?: string; includeData?: boolean; status?: string; limit?: number } = {},
	): Promise<ExecutionSummary[]> {
		const all: ExecutionSummary[] = [];
		let cursor: string | undefined;
		do {
			const query = new URLSearchParams();
			if (options.workflowId) query.set('workflowId', options.workflowId);
			if (options.includeData) query.set('includeData', 'true');
			if (options.status) query.set('status', options.status);
			query.set('limit', String(Math.min(options.limit ?? 250, 250)));
			if (cursor) query.set('cursor', cursor);
			const page = await this.api<{ data: ExecutionSummary[]; nextCursor: string | null }>(
				'GET',
				`/executions?${query}`,
			);
			all.push(...page.data);
			cursor = page.nextCursor ?? undefined;
			if (options.limit && all.length >= options.limit) break;
		} while (cursor);
		return all;
	}

	async getExecution(id: string, includeData = true): Promise<ExecutionSummary> {
		return this.api('GET', `/executions/${id}?includeData=${includeData}`);
	}

	/**
	 * Waits until the workflow has at least `count` finished executions and returns them, with their
	 * run data unless `includeData` is false. The polls go without data, which can be large for
	 * many executions; the data is fetched once, when enough have finished.
	 */
	async waitForExecutions(
		workflowId: string,
		count: number,
		timeoutMs = 60_000,
		options: { includeData?: boolean; intervalMs?: number } = {},
	): Promise<ExecutionSummary[]> {
		const { includeData = true, intervalMs = 500 } = options;
		const finished = (executions: ExecutionSummary[]) =>
			executions.filter(
				(e) => e.status !== 'running' && e.status !== 'new' && e.status !== 'waiting',
			);
		timeoutMs = scaled(timeoutMs);
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const executions = await this.listExecutions({ workflowId });
			const done = finished(executions);
			if (done.length >= count) {
				if (!includeData) return done;
				const withData = finished(await this.listExecutions({ workflowId, includeData: true }));
				if (withData.length >= count) return withData;
			}
			if (Date.now() > deadline) {
				throw new Error(
					`workflow ${workflowId}: ${done.length}/${count} finished executions after ${timeoutMs} ms (statuses: ${executions.map((e) => e.status).join(',') || 'none'})`,
				);
			}
			await new Promise((resolve) => setTimeout(resolve, intervalMs));
		}
	}
}

/** The items a node output in an execution (first run, first output by default). */
export function nodeOutput(
	execution: ExecutionSummary,
	nodeName: string,
	runIndex = 0,
	outputIndex = 0,
): Array<Record<string, unknown>> {
	const runs = execution.data?.resultData?.runData?.[nodeName];
	if (!runs?.[runIndex]) return [];
	return (runs[runIndex].data?.main?.[outputIndex] ?? []).map((item) => item.json);
}

/** The error message of an execution, if it failed. */
export function executionError(execution: ExecutionSummary): string | undefined {
	const error = execution.data?.resultData?.error;
	if (error) return [error.message, error.description].filter(Boolean).join(': ');
	for (const [node, runs] of Object.entries(execution.data?.resultData?.runData ?? {})) {
		for (const run of runs) if (run.error) return `${node}: ${run.error.message}`;
	}
	return execution.status === 'error' || execution.status === 'crashed'
		? `status ${execution.status}`
		: undefined;
}
