/** Shared helpers of the sandbox contract tests: raw HTTP over loopback with undici. */
import { request } from 'undici';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../sandbox';

export const UA = 'sandbox-contract-tests/1.0';

export interface Res<T = any> {
	status: number;
	headers: Record<string, string>;
	text: string;
	json: T;
}

export async function http<T = any>(
	method: string,
	url: string,
	opts: {
		token?: string;
		body?: unknown;
		raw?: string;
		form?: Record<string, string>;
		ua?: boolean;
		headers?: Record<string, string>;
	} = {},
): Promise<Res<T>> {
	const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
	if (opts.ua !== false) headers['user-agent'] = UA;
	if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
	let body: string | undefined;
	if (opts.form) {
		headers['content-type'] = 'application/x-www-form-urlencoded';
		body = new URLSearchParams(opts.form).toString();
	} else if (opts.raw !== undefined) {
		headers['content-type'] ??= 'application/json';
		body = opts.raw;
	} else if (opts.body !== undefined) {
		headers['content-type'] = 'application/json';
		body = JSON.stringify(opts.body);
	}
	const res = await request(url, { method: method as 'GET', headers, body });
	const text = await res.body.text();
	let json: any;
	try {
		json = text ? JSON.parse(text) : undefined;
	} catch {
		json = undefined;
	}
	const h: Record<string, string> = {};
	for (const [k, v] of Object.entries(res.headers))
		h[k] = Array.isArray(v) ? v.join(', ') : String(v);
	return { status: res.statusCode, headers: h, text, json };
}

let seq = 0;
export const uniqueUser = (prefix = 'it') =>
	`${prefix}-${process.pid}-${++seq}-${Date.now() % 100000}`;

/** The API roots of any deployment (the e2e stack's too, not only a sandbox started here). */
export const roots = (sb: Pick<SandboxHandle, 'url' | 'tenancyId'>, tenancy = sb.tenancyId) => ({
	report: `${sb.url}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${tenancy}`,
	bookmark: `${sb.url}/local/vendor_administration/index.php/api/1.2/bookmarks/${tenancy}`,
	webhook: `${sb.url}/api/v2/${tenancy}/webhooks`,
});

/** An integration credential of its own (unique API user), exchanged for an API key. */
export class Api {
	apiKey = '';
	refreshToken = '';
	readonly r: ReturnType<typeof roots>;
	constructor(
		readonly sb: SandboxHandle,
		readonly username = uniqueUser(),
	) {
		this.r = roots(sb);
	}

	static async login(sb: SandboxHandle, username?: string): Promise<Api> {
		const api = new Api(sb, username);
		const grant = await sb.control.issueRefreshToken(api.username);
		api.refreshToken = grant.refresh_token;
		await api.refresh();
		return api;
	}

	async refresh(): Promise<Res> {
		const res = await http(
			'GET',
			`${this.r.report}/apikeys?username=${encodeURIComponent(this.username)}`,
			{ token: this.refreshToken },
		);
		if (res.status !== 200) throw new Error(`refresh failed: ${res.status} ${res.text}`);
		this.apiKey = res.json.api_key;
		this.refreshToken = res.json.refresh_token;
		return res;
	}

	get<T = any>(url: string, query: Record<string, string | number | boolean> = {}) {
		const qs = new URLSearchParams(
			Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
		).toString();
		return http<T>('GET', qs ? `${url}?${qs}` : url, { token: this.apiKey });
	}
	send<T = any>(method: string, url: string, body?: unknown) {
		return http<T>(method, url, { token: this.apiKey, body });
	}

	/** submit + poll a report until Complete */
	async report(
		name: string,
		query: Record<string, string | number | boolean> = {},
	): Promise<any[]> {
		const first = await this.get(`${this.r.report}/${name}`, query);
		if (first.json.status === 'Failed') throw new Error(JSON.stringify(first.json));
		let res = first;
		for (let i = 0; i < 20 && res.json.status !== 'Complete'; i++)
			res = await this.get(`${this.r.report}/${name}`, { requestid: first.json.requestid });
		if (res.json.status !== 'Complete') throw new Error(`report ${name} never completed`);
		return res.json.data;
	}

	/** walks the feed from the start (or given query) to the end; returns every page */
	async walk(
		query: Record<string, string | number | boolean> = {},
	): Promise<{ pages: any[]; records: any[] }> {
		const pages: any[] = [];
		let res = await this.get(`${this.r.report}/completions`, query);
		for (;;) {
			if (res.json.status !== 'Complete') throw new Error(JSON.stringify(res.json));
			pages.push(res.json);
			if (!res.json.next_page_url) break;
			res = await http('GET', res.json.next_page_url, { token: this.apiKey });
		}
		return { pages, records: pages.flatMap((p) => p.data) };
	}
}

/** `what` may be a function, for a failure message that shows the state at the time-out. */
export async function waitFor<T>(
	fn: () => Promise<T | undefined | false>,
	timeoutMs = 5000,
	what: string | (() => string) = 'condition',
	intervalMs = 20,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > deadline)
			throw new Error(
				`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`,
			);
		await new Promise((r) => setTimeout(r, intervalMs));
	}
}

/**
 * One sandbox per test file with a logged-in API user; `ctx` is filled in beforeAll. The high
 * rate limit keeps the contract tests from pacing each other.
 */
export function useSandbox(options: SandboxOptions = {}): { sb: SandboxHandle; api: Api } {
	const ctx = {} as { sb: SandboxHandle; api: Api };
	beforeAll(async () => {
		ctx.sb = await startSandbox({ rateLimitPerMinute: 100_000, ...options });
		ctx.api = await Api.login(ctx.sb);
	});
	afterAll(() => ctx.sb.close());
	return ctx;
}

import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8');

export interface Received {
	path: string;
	headers: IncomingHttpHeaders;
	raw: Buffer;
}

/** A webhook receiver on loopback (https with the test CA, or http) that records raw bodies. */
export async function receiver(
	opts: { tls?: boolean; status?: (n: number) => number; reply?: string } = {},
) {
	const received: Received[] = [];
	const handler = (
		req: import('node:http').IncomingMessage,
		res: import('node:http').ServerResponse,
	) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			received.push({ path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks) });
			res.writeHead(opts.status ? opts.status(received.length) : 200, {
				'content-type': 'text/plain',
			});
			res.end(opts.reply ?? 'ok');
		});
	};
	const server: Server = opts.tls
		? (createHttps(
				{ key: fixture('receiver.key'), cert: fixture('receiver.pem') },
				handler,
			) as unknown as Server)
		: createHttp(handler);
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
	const { port } = server.address() as AddressInfo;
	return {
		url: `${opts.tls ? 'https' : 'http'}://${opts.tls ? 'localhost' : '127.0.0.1'}:${port}`,
		received,
		close: () =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	};
}
