/** Request context and reply helpers shared by the API areas. */
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatLog } from './chatModel';
import type { Deliveries } from './deliveries';
import type { Faults } from './faults';
import type { DemoDataOptions } from './demoData';
import type { SandboxConfig, Store } from './store';
import type { ApiUser } from './types';

export interface Reply {
	status: number;
	/** JSON body (serialized as application/json) */
	body?: unknown;
	/** plain-text body (serialized as text/plain) */
	text?: string;
	headers?: Record<string, string | number>;
}

export const json = (status: number, body: unknown, headers?: Reply['headers']): Reply => ({
	status,
	body,
	headers,
});
export const text = (status: number, t: string, headers?: Reply['headers']): Reply => ({
	status,
	text: t,
	headers,
});

/** The running sandbox: what every area may use. */
export interface Sandbox {
	store: Store;
	tenancyId: string;
	defaultUsername: string;
	initialConfig: SandboxConfig;
	demoData: boolean | DemoDataOptions;
	deliveries: Deliveries;
	faults: Faults;
	/** what the scripted chat model (chatModel.ts) received and answered */
	chat: ChatLog;
	/** the server's own base URL (http://host:port) */
	url: string;
	/** back to the seeded demo state with new tokens */
	reset(): void;
}

export interface Ctx {
	sb: Sandbox;
	method: string;
	path: string;
	query: URLSearchParams;
	headers: IncomingHttpHeaders;
	/** parsed JSON or form body; null when there was none */
	body: Record<string, unknown> | null;
	/** base URL as the client addressed it (Host header), for absolute URLs in responses */
	baseUrl: string;
	/** the authenticated API user (set for every spec operation except the refresh) */
	user: ApiUser | null;
}

/** Laravel-style validation failure: 422 `{message, errors: {field: [messages]}}`. */
export function unprocessable(errors: Record<string, string[]>): Reply {
	const first = Object.values(errors)[0][0];
	const more = Object.values(errors).reduce((n, v) => n + v.length, 0) - 1;
	const message = more > 0 ? `${first} (and ${more} more error${more > 1 ? 's' : ''})` : first;
	return json(422, { message, errors });
}

export function bearer(headers: IncomingHttpHeaders): string | null {
	const h = headers.authorization;
	if (!h) return null;
	const m = /^Bearer\s+(.+)$/i.exec(h.trim());
	return m ? m[1].trim() : '';
}
