/**
 * The HTTP server: routes the spec's paths to their areas, in the order a real gateway would:
 * request log -> injected faults -> User-Agent (403) -> route (404/405) -> authentication
 * (refresh token for op 1, API key otherwise) -> tenancy -> rate limit -> operation.
 * `/__sandbox/...` goes to the control API and `/openai/v1/...` to the scripted chat model
 * (chatModel.ts); both skip all of that and stay out of the request log.
 */
import {
	createServer as createHttpServer,
	type IncomingMessage,
	type Server,
	type ServerResponse,
} from 'node:http';
import { authenticate, classify, refresh } from './auth';
import { CHAT_PREFIX, handleChatModel } from './chatModel';
import { createBookmark } from './bookmarks';
import { CONTROL_PREFIX, control } from './control';
import { completionsFeed } from './feed';
import type { Ctx, Reply, Sandbox } from './http';
import { json } from './http';
import { consume, rateHeaders } from './rateLimit';
import { report } from './reports';
import type { RequestLogEntry } from './types';
import { isoZ, sleep } from './util';
import {
	createWebhook,
	deleteWebhook,
	getWebhook,
	listEvents,
	listWebhooks,
	redispatch,
	relay,
	updateWebhook,
	webhookLogs,
} from './webhooks';

export const REPORT_ROOT =
	'/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/{tenancy_id}';
export const BOOKMARK_ROOT =
	'/local/vendor_administration/index.php/api/1.2/bookmarks/{tenancy_id}';
export const WEBHOOK_ROOT = '/api/v2/{tenancy_id}/webhooks';

const MAX_BODY = 1024 * 1024;
const CHAT_MAX_BODY = 32 * 1024 * 1024;
const SEG = '([^/]+)';
const root = (r: string) => r.replace(/[.]/g, '\\.').replace('{tenancy_id}', SEG);

type Handler = (ctx: Ctx, m: RegExpExecArray) => Reply | Promise<Reply>;
interface SpecRoute {
	method: string;
	re: RegExp;
	/** API-key operations; null for operation 1, which authenticates with the refresh token itself */
	handler: Handler | null;
}

const R = root(REPORT_ROOT);
const B = root(BOOKMARK_ROOT);
const W = root(WEBHOOK_ROOT);
const route = (method: string, path: string, handler: Handler | null): SpecRoute => ({
	method,
	re: new RegExp(`^${path}$`),
	handler,
});

const ROUTES: SpecRoute[] = [
	route('GET', `${R}/apikeys`, null), // operation 1: refresh (see auth.ts)
	route('GET', `${R}/activitycompletions`, (ctx) => report(ctx, 'activitycompletions')),
	route('GET', `${R}/attendance`, (ctx) => report(ctx, 'attendance')),
	route('GET', `${R}/content`, (ctx) => report(ctx, 'content')),
	route('GET', `${R}/completions`, (ctx) => completionsFeed(ctx)),
	route('POST', B, (ctx) => createBookmark(ctx)),
	route('GET', `${W}/events`, () => listEvents()),
	route('GET', W, (ctx) => listWebhooks(ctx)),
	route('POST', W, (ctx) => createWebhook(ctx)),
	route('POST', `${W}/relay`, (ctx) => relay(ctx)),
	route('GET', `${W}/${SEG}`, (ctx, m) => getWebhook(ctx, m[2])),
	route('PATCH', `${W}/${SEG}`, (ctx, m) => updateWebhook(ctx, m[2])),
	route('PUT', `${W}/${SEG}`, (ctx, m) => updateWebhook(ctx, m[2])),
	route('DELETE', `${W}/${SEG}`, (ctx, m) => deleteWebhook(ctx, m[2])),
	route('GET', `${W}/${SEG}/logs`, (ctx, m) => webhookLogs(ctx, m[2])),
	route('POST', `${W}/${SEG}/logs/${SEG}/redispatch`, (ctx, m) => redispatch(ctx, m[2], m[3])),
];

function send(res: ServerResponse, reply: Reply) {
	if (res.headersSent || res.destroyed) return;
	for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, String(v));
	if (reply.text !== undefined) {
		res.setHeader('Content-Type', 'text/plain; charset=utf-8');
		res.writeHead(reply.status);
		res.end(reply.status === 204 ? undefined : reply.text);
	} else if (reply.body !== undefined) {
		const s = JSON.stringify(reply.body);
		res.setHeader('Content-Type', 'application/json');
		res.setHeader('Content-Length', Buffer.byteLength(s));
		res.writeHead(reply.status);
		res.end(s);
	} else {
		res.writeHead(reply.status);
		res.end();
	}
}

class BodyError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

async function readBody(
	req: IncomingMessage,
	max = MAX_BODY,
): Promise<Record<string, unknown> | null> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const c of req) {
		size += (c as Buffer).length;
		if (size > max)
			throw new BodyError(413, `The request body is too large (max ${max / 1024 / 1024} MiB).`);
		chunks.push(c as Buffer);
	}
	const raw = Buffer.concat(chunks).toString('utf8');
	if (raw.trim() === '') return null;
	const type = String(req.headers['content-type'] ?? '').toLowerCase();
	if (type.includes('application/x-www-form-urlencoded'))
		return Object.fromEntries(new URLSearchParams(raw));
	try {
		const v = JSON.parse(raw) as unknown;
		return (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
	} catch {
		throw new BodyError(400, 'The request body is not valid JSON.');
	}
}

export interface ServerOptions {
	/** per-request log line (the CLI prints them unless --quiet) */
	log?: (line: string) => void;
}

export function createServer(sb: Sandbox, opts: ServerOptions = {}): Server {
	const server = createHttpServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
		const path = url.pathname;
		const method = (req.method ?? 'GET').toUpperCase();
		const handle =
			path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)
				? handleControl(
						sb,
						req,
						res,
						method,
						path.slice(CONTROL_PREFIX.length) || '/',
						url.searchParams,
					)
				: path === CHAT_PREFIX || path.startsWith(`${CHAT_PREFIX}/`)
					? handleChat(sb, req, res, method, path)
					: handleSpec(sb, req, res, method, path, url.searchParams, opts);
		handle.catch((e: Error) => {
			process.stderr.write(`[sandbox] ${method} ${path}: ${e.stack ?? e.message}\n`);
			send(res, json(500, { message: 'Server Error' }));
		});
	});
	server.keepAliveTimeout = 5000;
	return server;
}

async function handleControl(
	sb: Sandbox,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	sub: string,
	q: URLSearchParams,
) {
	let body: Record<string, unknown> | null;
	try {
		body = await readBody(req);
	} catch (e) {
		return send(
			res,
			json(e instanceof BodyError ? e.status : 400, { error: (e as Error).message }),
		);
	}
	send(res, await control(sb, method, sub, q, body));
}

async function handleChat(
	sb: Sandbox,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	path: string,
) {
	let body: Record<string, unknown> | null;
	try {
		// a conversation carries every tool result so far: a feed read can be megabytes
		body = method === 'GET' ? null : await readBody(req, CHAT_MAX_BODY);
	} catch (e) {
		const message = (e as Error).message;
		return send(
			res,
			json(e instanceof BodyError ? e.status : 400, {
				error: { message, type: 'invalid_request_error', param: null, code: null },
			}),
		);
	}
	handleChatModel(sb.chat, req, res, method, path, body);
}

async function handleSpec(
	sb: Sandbox,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	path: string,
	query: URLSearchParams,
	opts: ServerOptions,
) {
	const { store } = sb;
	store.stats.requests++;
	const entry: RequestLogEntry = {
		at: isoZ(store.now()),
		method,
		path,
		query: Object.fromEntries(query),
		user_agent: req.headers['user-agent'] ?? null,
		...classify(store, req.headers.authorization),
		status: null,
	};
	store.logRequest(entry);
	res.on('finish', () => {
		entry.status = res.statusCode;
		store.stats.by_status[res.statusCode] = (store.stats.by_status[res.statusCode] ?? 0) + 1;
		opts.log?.(`${method} ${path}${query.size ? `?${query}` : ''} -> ${res.statusCode}`);
	});

	// injected faults act first, like a flaky gateway in front of the API
	const fault = sb.faults.pick(method, path, store.rng);
	if (fault.delayMs > 0) await sleep(fault.delayMs);
	if (fault.terminal === 'drop') {
		opts.log?.(`${method} ${path} -> (dropped)`);
		req.socket.destroy();
		return;
	}
	if (fault.terminal === 'http500') return send(res, json(500, { message: 'Server Error' }));
	if (fault.terminal === 'http429') {
		store.stats.rate_limited++;
		return send(
			res,
			json(
				429,
				{ message: 'Too Many Attempts.' },
				{ ...rateHeaders(store.config.rateLimitPerMinute, 0), 'Retry-After': '1' },
			),
		);
	}

	// every request must carry a User-Agent (spec Authentication 7)
	if (!req.headers['user-agent']) return send(res, json(403, { message: 'Forbidden' }));

	const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
	const matching = ROUTES.map((r) => ({ r, m: r.re.exec(normalized) })).filter((x) => x.m);
	const hit = matching.find((x) => x.r.method === method);
	if (!hit) {
		if (matching.length)
			return send(
				res,
				json(
					405,
					{ message: 'Method Not Allowed' },
					{ Allow: [...new Set(matching.map((x) => x.r.method))].join(', ') },
				),
			);
		return send(res, json(404, { message: 'Not Found' }));
	}

	let body: Record<string, unknown> | null = null;
	try {
		if (method !== 'GET' && method !== 'DELETE') body = await readBody(req);
	} catch (e) {
		return send(
			res,
			json(e instanceof BodyError ? e.status : 400, { message: (e as Error).message }),
		);
	}
	const ctx: Ctx = {
		sb,
		method,
		path,
		query,
		headers: req.headers,
		body,
		baseUrl: `http://${req.headers.host ?? new URL(sb.url).host}`,
		user: null,
	};
	const tenancyOk = decodeURIComponent(hit.m![1]) === sb.tenancyId;

	if (!hit.r.handler) return send(res, refresh(ctx, tenancyOk));

	const auth = authenticate(ctx);
	if ('reject' in auth) return send(res, auth.reject);
	if (!tenancyOk)
		return send(
			res,
			json(
				401,
				{ message: 'Unauthenticated.', error: 'tenancy_mismatch' },
				{ 'WWW-Authenticate': 'Bearer' },
			),
		);
	ctx.user = auth.user;
	const rate = consume(store, auth.user.username);
	if (rate.reject) return send(res, rate.reject);
	const reply = await hit.r.handler(ctx, hit.m!);
	send(res, { ...reply, headers: { ...rate.headers, ...reply.headers } });
}
