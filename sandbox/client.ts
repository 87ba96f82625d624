/** Typed HTTP client of the sandbox control API (`/__sandbox/...`). */
import { Agent, request } from 'undici';
import type { ChatRequestEntry } from './chatModel';
import type { DeliveryFaultKind, FaultSpec } from './faults';
import type { SandboxConfig } from './store';
import type { DeliveryAttempt, RequestLogEntry, Subscription } from './types';

export type { DeliveryAttempt, RequestLogEntry } from './types';
export type { ChatRequestEntry } from './chatModel';
export type { ToolSpec, Turn, ToolCall } from './chatRules';

export interface TokenGrant {
	username: string;
	tenancy_id: string;
	base_url: string;
	refresh_token: string;
}
export interface AuthState {
	username: string;
	refresh_token: string;
	api_key: string | null;
	api_key_expires_at: string | null;
	exchanges: number;
	failed_exchanges: number;
}
export interface Stats {
	requests: number;
	exchanges: number;
	failed_exchanges: number;
	rate_limited: number;
	by_status: Record<string, number>;
}
/** A completion record in its feed wire shape. */
export type CompletionRecord = Record<string, unknown> & {
	completionid: number;
	userid: number;
	contentid: number;
	lastupdated: string;
	completionstatus: string;
};
/** A stored subscription as the control API shows it: owner as `username`, ISO times, secrets unmasked. */
export type SubscriptionState = Omit<
	Subscription,
	'owner' | 'created_at' | 'updated_at' | 'deleted_at'
> & { username: string; created_at: string; updated_at: string; deleted_at: string | null };
export interface DemoSummary {
	tenancy_id: string;
	users: { id: number; username: string; suspended: boolean; deleted: boolean }[];
	content: {
		id: number;
		fullname: string;
		contenttype: string;
		deleted: boolean;
		activities: number[];
		sessions: number[];
	}[];
	completions: number;
}

export class SandboxControlError extends Error {
	constructor(
		readonly status: number,
		readonly body: unknown,
		what: string,
	) {
		super(`sandbox control ${what} failed with ${status}: ${JSON.stringify(body)}`);
	}
}

export class SandboxClient {
	readonly baseUrl: string;
	// Idle sockets dropped after 1 s whatever the server's Keep-Alive hint (5 s): on a loaded
	// machine a socket kept to the hint's end met the server closing it under a POST ("other side
	// closed"), which cannot be sent again safely.
	private readonly agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
	// Writes on a connection of their own: a busy test process's 1 s can run late, and a write
	// sent on a socket the server has just closed fails ("read ECONNRESET") and cannot be repeated.
	private readonly writeAgent = new Agent({ pipelining: 0 });

	constructor(baseUrl: string) {
		this.baseUrl = baseUrl.replace(/\/+$/, '');
	}

	private async call<T>(
		method: string,
		path: string,
		body?: unknown,
		query?: Record<string, string | number | undefined>,
	): Promise<T> {
		const qs = query
			? new URLSearchParams(
					Object.entries(query)
						.filter((e): e is [string, string | number] => e[1] !== undefined)
						.map(([k, v]): [string, string] => [k, String(v)]),
				).toString()
			: '';
		const url = `${this.baseUrl}/__sandbox${path}${qs ? `?${qs}` : ''}`;
		let res: Awaited<ReturnType<typeof request>>;
		let text: string;
		for (let attempt = 1; ; attempt++) {
			try {
				res = await request(url, {
					method: method as 'GET',
					headers: body === undefined ? {} : { 'content-type': 'application/json' },
					body: body === undefined ? undefined : JSON.stringify(body),
					dispatcher: method === 'GET' ? this.agent : this.writeAgent,
				});
				text = await res.body.text();
				break;
			} catch (error) {
				// A connection closed under a request (a busy machine): a read is safe to repeat, a
				// write (simulate, config...) is not.
				if (method !== 'GET' || attempt >= 3) throw error;
				await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
			}
		}
		const parsed = text ? (JSON.parse(text) as unknown) : undefined;
		if (res.statusCode >= 400)
			throw new SandboxControlError(res.statusCode, parsed, `${method} ${path}`);
		return parsed as T;
	}

	/** Issues a fresh refresh token for an API user (created when new); kills its previous token and API key. */
	issueRefreshToken(username?: string) {
		return this.call<TokenGrant>(
			'POST',
			'/refresh-tokens',
			username === undefined ? {} : { username },
		);
	}
	/** Live (unmasked) credentials and exchange counters of an API user. */
	auth(username: string) {
		return this.call<AuthState>('GET', `/auth/${encodeURIComponent(username)}`);
	}
	/** Makes the current API key expired without rotating the refresh token. */
	expireApiKey(username: string) {
		return this.call<{ username: string; api_key_expires_at: string }>(
			'POST',
			`/auth/${encodeURIComponent(username)}/expire-api-key`,
		);
	}
	requests(filter: { username?: string; path?: string } = {}) {
		return this.call<RequestLogEntry[]>('GET', '/requests', undefined, filter);
	}
	clearRequests() {
		return this.call<{ cleared: number }>('DELETE', '/requests');
	}
	/**
	 * Every request the scripted chat model (`/openai/v1`) received, oldest first: the body as
	 * sent, the tools and turns read from it, and its reply. `api` narrows to one endpoint.
	 */
	chatRequests(filter: { api?: ChatRequestEntry['api'] } = {}) {
		return this.call<ChatRequestEntry[]>('GET', '/chat/requests', undefined, filter);
	}
	clearChatRequests() {
		return this.call<{ cleared: number }>('DELETE', '/chat/requests');
	}
	stats() {
		return this.call<Stats>('GET', '/stats');
	}
	getConfig() {
		return this.call<SandboxConfig>('GET', '/config');
	}
	setConfig(patch: Partial<SandboxConfig>) {
		return this.call<SandboxConfig>('PATCH', '/config', patch);
	}
	/** Replaces the active fault rules (one or several). */
	setFaults(faults: FaultSpec | FaultSpec[]) {
		return this.call<{ faults: FaultSpec[] }>('PUT', '/faults', faults);
	}
	/**
	 * A delivery fault (replaces the active fault rules, as setFaults does): every `every`-th
	 * delivery's attempt number `attempt` (default 1, the first) reaches the receiver, which
	 * processes it, but counts as failed, so the platform retries it with identical bytes after
	 * `deliveryBackoffMs`. `dropAnswer` (default): the whole answer is awaited, then discarded.
	 * `answerTimeout`: the sandbox stops waiting after `timeoutMs` (default 500) without aborting.
	 */
	dropDeliveryAnswers(options: {
		every: number;
		kind?: DeliveryFaultKind;
		attempt?: number;
		timeoutMs?: number;
		count?: number;
		pathPattern?: string;
	}) {
		const { kind = 'dropAnswer', ...rest } = options;
		return this.setFaults({ kind, ...rest });
	}
	getFaults() {
		return this.call<{ faults: FaultSpec[] }>('GET', '/faults');
	}
	clearFaults() {
		return this.call<{ faults: [] }>('DELETE', '/faults');
	}
	simulateCompletion(
		input: { userId?: number; contentId?: number; completionstatus?: string } = {},
	) {
		return this.call<{ completion: CompletionRecord }>('POST', '/simulate/completion', input);
	}
	simulateRecordChange(completionId: number) {
		return this.call<{ completion: CompletionRecord }>('POST', '/simulate/record-change', {
			completionId,
		});
	}
	simulateReEnrolment(completionId: number) {
		return this.call<{ archived: CompletionRecord; created: CompletionRecord }>(
			'POST',
			'/simulate/re-enrolment',
			{ completionId },
		);
	}
	/**
	 * Changes a learner's email, first or last name (fires `Events\Users\Updated`); completion
	 * payloads rendered afterwards (and `redispatchPayload: current` redispatches) show the new values.
	 */
	simulateUserUpdate(
		userId: number,
		changes: { email?: string; firstname?: string; lastname?: string },
	) {
		return this.call<{
			user: { id: number; username: string; email: string; firstname: string; lastname: string };
		}>('POST', '/simulate/user-update', { userId, ...changes });
	}
	simulateUserDeletion(userId: number) {
		return this.call<{ removed: number[] }>('POST', '/simulate/user-deletion', { userId });
	}
	simulateContentDeletion(contentId: number) {
		return this.call<{ removed: number[] }>('POST', '/simulate/content-deletion', { contentId });
	}
	simulateAccountMerge(fromUserId: number, toUserId: number) {
		return this.call<{ retired: number[]; created: CompletionRecord[] }>(
			'POST',
			'/simulate/account-merge',
			{ fromUserId, toUserId },
		);
	}
	/** Dispatches any concrete event with the given payload to the matching subscriptions. */
	simulateEvent(event: string, payload: unknown = {}) {
		return this.call<{ event: string; deliveries: number }>('POST', '/simulate/event', {
			event,
			payload,
		});
	}
	/** Every outgoing delivery attempt (newest last). */
	deliveries(filter: { subscriptionId?: number; username?: string } = {}) {
		return this.call<DeliveryAttempt[]>('GET', '/deliveries', undefined, filter);
	}
	pendingDeliveries() {
		return this.call<{ pending: number }>('GET', '/deliveries/pending');
	}
	/** Polls until no attempt is scheduled or in flight: every delivery so far has its last answer. */
	async waitUntilDeliveriesSettled(timeoutMs = 5000): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const { pending } = await this.pendingDeliveries();
			if (pending === 0) return;
			if (Date.now() > deadline)
				throw new Error(`${pending} delivery attempts still pending after ${timeoutMs} ms`);
			await new Promise((r) => setTimeout(r, 25));
		}
	}
	/** Polls until at least `count` attempts match the filter (default timeout 5 s). */
	async waitForDeliveries(
		filter: { subscriptionId?: number; username?: string },
		count = 1,
		timeoutMs = 5000,
	): Promise<DeliveryAttempt[]> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const d = await this.deliveries(filter);
			if (d.length >= count) return d;
			if (Date.now() > deadline)
				throw new Error(
					`expected ${count} deliveries for ${JSON.stringify(filter)}, saw ${d.length}`,
				);
			await new Promise((r) => setTimeout(r, 25));
		}
	}
	/** All subscriptions, soft-deleted ones included, secrets unmasked. */
	subscriptions(username?: string) {
		return this.call<SubscriptionState[]>('GET', '/subscriptions', undefined, { username });
	}
	generateFeed(count: number, contentType?: string) {
		return this.call<{ total: number }>(
			'POST',
			'/feed/generate',
			contentType === undefined ? { count } : { count, contentType },
		);
	}
	getClock() {
		return this.call<{ now: number; iso: string }>('GET', '/clock');
	}
	advanceClock(advanceMs: number) {
		return this.call<{ now: number; iso: string }>('POST', '/clock', { advanceMs });
	}
	/** Back to the seeded demo state (new tokens, no subscriptions, no faults, initial config). */
	reset() {
		return this.call<TokenGrant>('POST', '/reset');
	}
	/** Ids of the demo learners and content (to pick test subjects). */
	demo() {
		return this.call<DemoSummary>('GET', '/demo');
	}
	completion(completionId: number) {
		return this.call<{ completion: CompletionRecord }>('GET', `/completions/${completionId}`);
	}
	async close() {
		await Promise.all([this.agent.close(), this.writeAgent.close()]);
	}
}

/**
 * The `learningPlatformApi` credential's data for a sandbox API user, as n8n holds it before the
 * first exchange (no API key yet): what tests, the bench and the real-n8n harness import.
 */
export function credentialData(grant: TokenGrant): Record<string, string> {
	return {
		baseUrl: grant.base_url,
		tenancyId: grant.tenancy_id,
		username: grant.username,
		refreshToken: grant.refresh_token,
		apiKey: '',
		apiKeyExpiresAt: '',
	};
}
