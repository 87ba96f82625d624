/**
 * Programmatic entry point: `startSandbox(options)` starts a local simulator of the Learning
 * Platform API (../shared/spec/learning-platform-api.md) and returns its URL, credentials and a
 * client of its control API.
 */
import type { AddressInfo } from 'node:net';
import { issueRefreshToken } from './auth';
import { ChatLog } from './chatModel';
import { SandboxClient } from './client';
import { Deliveries } from './deliveries';
import { seedDemoData, type DemoDataOptions } from './demoData';
import { Faults } from './faults';
import type { Sandbox } from './http';
import { createServer } from './server';
import {
	CONFIG_KEYS,
	DEFAULT_CONFIG,
	Store,
	patchedConfig,
	type DeliveryLogReading,
	type LogOrder,
	type RedispatchEntryReading,
	type RedispatchPayloadReading,
	type SandboxConfig,
} from './store';

export { SandboxClient } from './client';
export type {
	AuthState,
	CompletionRecord,
	DemoSummary,
	Stats,
	SubscriptionState,
	TokenGrant,
	DeliveryAttempt,
	RequestLogEntry,
	ChatRequestEntry,
	ToolSpec,
	Turn,
	ToolCall,
} from './client';
export { CHAT_PREFIX, SCRIPTED_MODEL } from './chatModel';
export { SandboxControlError } from './client';
export type {
	SandboxConfig,
	DeliveryLogReading,
	LogOrder,
	RedispatchEntryReading,
	RedispatchPayloadReading,
} from './store';
export type { FaultSpec, FaultKind } from './faults';
export { REPORT_ROOT, BOOKMARK_ROOT, WEBHOOK_ROOT } from './server';
export { CONTROL_PREFIX } from './control';
export { ALL_EVENTS, CONCRETE_EVENTS, WILDCARD_EVENTS } from './events';
export { sign as signDeliveryBody, USER_AGENT as DELIVERY_USER_AGENT } from './deliveries';

export interface SandboxOptions {
	/** default 0 (random) */
	port?: number;
	/** default '127.0.0.1' */
	host?: string;
	/** default 'acme-learning' */
	tenancyId?: string;
	/** default 'n8n-integration' (an API user that exists at start) */
	username?: string;
	/** default 60, per API user, sliding 60 s window */
	rateLimitPerMinute?: number;
	/** default 2: a report is Complete on the Nth poll with requestid */
	reportReadyAfterPolls?: number;
	/** default 0; if > 0, Complete only once this much time passed since submission (both conditions must hold) */
	reportReadyAfterMs?: number;
	/** default 0 */
	feedVisibilityDelayMs?: number;
	/** default 3 */
	deliveryMaxAttempts?: number;
	/** default 200 (doubling), at most 2,147,483,647 (Node's largest timer) */
	deliveryBackoffMs?: number;
	/** default 5000 */
	deliveryTimeoutMs?: number;
	/** sandbox-only: accept http:// webhook/relay URLs (default false: HTTPS only, as the spec) */
	allowHttpWebhookUrls?: boolean;
	/** the tenancy's did-not-complete feature (feed status `Did Not Complete`), default false */
	didNotCompleteEnabled?: boolean;
	/** the delivery log's reading: 'perDelivery' (default) or 'perAttempt' (sandbox/README.md) */
	deliveryLog?: DeliveryLogReading;
	/** the delivery log's order: 'newestFirst' (default) or 'oldestFirst' (ascending id) */
	logOrder?: LogOrder;
	/** what a redispatch does to the entry asked for: 'marks' (default), 'flagOnly' or 'untouched' (sandbox/README.md) */
	redispatchEntry?: RedispatchEntryReading;
	/** what a redispatch sends: 'original' (default) or 'current' (completion payloads rendered again) */
	redispatchPayload?: RedispatchPayloadReading;
	/** HTTP statuses after which a delivery is not retried, e.g. [404, 410] (default []) */
	deliveryNoRetryStatuses?: number[];
	/** extra CA(s) trusted for outgoing https deliveries (e.g. a self-signed TLS front of n8n) */
	trustedCaPem?: string | string[];
	/** default true: 300 learners, ~3,000 completion records; false: catalogue + 20 learners, no records */
	demoData?: boolean | DemoDataOptions;
	/** keep state (tokens above all) across restarts */
	stateFile?: string;
	/** injectable clock (ms) */
	now?: () => number;
	/** startSandbox logs nothing unless quiet === false (then one line per API request) */
	quiet?: boolean;
}

export interface SandboxHandle {
	/** base URL, e.g. http://127.0.0.1:41234 (no trailing slash): the credential's "base URL" */
	url: string;
	tenancyId: string;
	username: string;
	/** the live refresh token of `username` (always the current one) */
	readonly refreshToken: string;
	/** HTTP client of the control API of this server */
	control: SandboxClient;
	close(): Promise<void>;
}

/** The start options' config values, checked as PATCH /config checks them (a bad one throws). */
function configFrom(o: SandboxOptions): SandboxConfig {
	const patch: Record<string, unknown> = {};
	for (const k of CONFIG_KEYS) {
		const v = o[k as keyof SandboxOptions];
		if (v !== undefined) patch[k] = v;
	}
	return patchedConfig(DEFAULT_CONFIG, patch);
}

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
	const host = options.host ?? '127.0.0.1';
	const tenancyId = options.tenancyId ?? 'acme-learning';
	const username = options.username ?? 'n8n-integration';
	const config = configFrom(options);
	const store = new Store(
		config,
		options.now ?? Date.now,
		options.stateFile,
		typeof options.demoData === 'object' ? options.demoData.seed : undefined,
	);
	const ca =
		options.trustedCaPem === undefined
			? []
			: Array.isArray(options.trustedCaPem)
				? options.trustedCaPem
				: [options.trustedCaPem];

	const seed = () => {
		seedDemoData(store, options.demoData ?? true);
		issueRefreshToken(store, username);
	};
	const sb: Sandbox = {
		store,
		tenancyId,
		defaultUsername: username,
		initialConfig: config,
		demoData: options.demoData ?? true,
		deliveries: undefined as unknown as Deliveries,
		faults: new Faults(),
		chat: new ChatLog(),
		url: '',
		reset() {
			sb.deliveries.cancelAll();
			sb.faults.clear();
			sb.chat.clear();
			store.clear(config);
			seed();
			store.dirty();
		},
	};
	sb.deliveries = new Deliveries(() => sb, ca);

	if (store.load()) {
		if (!store.apiUsers.has(username)) issueRefreshToken(store, username);
	} else {
		seed();
	}
	store.flush();

	const server = createServer(
		sb,
		options.quiet === false ? { log: (l) => process.stdout.write(`[sandbox] ${l}\n`) } : {},
	);
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port ?? 0, host, () => {
			server.off('error', reject);
			resolve();
		});
	});
	const { port } = server.address() as AddressInfo;
	sb.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
	const control = new SandboxClient(sb.url);

	let closing: Promise<void> | null = null;
	return {
		url: sb.url,
		tenancyId,
		username,
		get refreshToken() {
			return store.apiUsers.get(username)!.refreshToken;
		},
		control,
		close() {
			closing ??= (async () => {
				const closed = new Promise<void>((r) => server.close(() => r()));
				server.closeAllConnections();
				await sb.deliveries.close();
				await closed;
				await control.close();
				store.flush();
			})();
			return closing;
		},
	};
}
