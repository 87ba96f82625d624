/**
 * Webhook subscriptions, version 2 (spec operations 7-15), under `{webhook_root}`.
 *
 * Subscriptions belong to the API USER the key was issued to (the spec says "per API key";
 * keys rotate on every refresh, so keying them on the key string would orphan them at each
 * rotation: "per API key" is read as "per integration credential").
 *
 * - events list; list and logs paginated (`page` default 1, `perPage` default 50 clamped 1..100,
 *   `meta.next`/`meta.prev` always null as in every shown response; page with `last_page`); logs
 *   newest first, or oldest first under `logOrder: oldestFirst`;
 * - create: HTTPS url only, event name or wildcard, 422 at 100 live subscriptions, 422 on a
 *   duplicate event+url among live subscriptions of the same user, 201 with secrets unmasked;
 * - get / list / update-without-secrets: secrets masked as eight U+2022 + last 4 characters
 *   (null when unset); update (PATCH = PUT) changes only supplied fields and unmasks a secret
 *   only when that secret was in the body;
 * - delete: soft, 204 with an empty text/plain body;
 * - unknown, deleted or another user's webhook id, or a log id not of that webhook: 404
 *   `{message: "Webhook not found."}` / `{message: "Log entry not found."}`;
 * - 422 bodies are Laravel style: `{message, errors: {<field>: [messages]}}`.
 */
import type { Ctx, Reply } from './http';
import { json, text, unprocessable } from './http';
import { ALL_EVENTS, CONCRETE_EVENTS, isWildcard, samplePayload } from './events';
import type { DeliveryLog, Subscription } from './types';
import { clamp, isoOffset, toInt } from './util';
import { randomUUID } from 'node:crypto';

export const MAX_SUBSCRIPTIONS = 100;
const AUTH_TYPES = ['bearer', 'hmac', 'both'];
const CONTENT_TYPE_HEADERS = ['application/json', 'application/x-www-form-urlencoded'];
const BULLETS = '\u2022'.repeat(8);

export const mask = (v: string | null) => (v == null ? null : BULLETS + v.slice(-4));

function render(s: Subscription, unmask: { signing_key?: boolean; auth_token?: boolean } = {}) {
	return {
		id: s.id,
		event: s.event,
		url: s.url,
		content_type_header: s.content_type_header,
		is_enabled: s.is_enabled,
		auth_type: s.auth_type,
		signing_key: unmask.signing_key ? s.signing_key : mask(s.signing_key),
		auth_token: unmask.auth_token ? s.auth_token : mask(s.auth_token),
		created_at: isoOffset(s.created_at),
		updated_at: isoOffset(s.updated_at),
	};
}

function renderLog(l: DeliveryLog) {
	return {
		id: l.id,
		event_type: l.event_type,
		delivery_id: l.delivery_id,
		success: l.success,
		tries: l.tries,
		status_code: l.status_code,
		response: l.response,
		response_time_ms: l.response_time_ms,
		redispatched: l.redispatched,
		created_at: isoOffset(l.created_at),
		updated_at: isoOffset(l.updated_at),
	};
}

export function paginate<T>(items: T[], q: URLSearchParams) {
	const p = toInt(q.get('page'));
	const pp = toInt(q.get('perPage'));
	const page = p === null || Number.isNaN(p) || p < 1 ? 1 : p;
	const perPage = pp === null || Number.isNaN(pp) ? 50 : clamp(pp, 1, 100);
	const total = items.length;
	return {
		data: items.slice((page - 1) * perPage, page * perPage),
		meta: {
			current_page: page,
			per_page: perPage,
			total,
			last_page: Math.max(1, Math.ceil(total / perPage)),
			next: null,
			prev: null,
		},
	};
}

/** https only, unless the sandbox-only `allowHttpWebhookUrls` relaxation is on */
function urlErrors(ctx: Ctx, v: unknown): string[] | null {
	if (typeof v !== 'string' || v.trim() === '') return ['The url field is required.'];
	let u: URL;
	try {
		u = new URL(v);
	} catch {
		return ['The url field must be a valid URL.'];
	}
	if (
		u.protocol === 'https:' ||
		(u.protocol === 'http:' && ctx.sb.store.config.allowHttpWebhookUrls)
	)
		return null;
	return ['The url field must start with one of the following: https://.'];
}

const asBool = (v: unknown): boolean | undefined =>
	v === true || v === 1 || v === '1' || v === 'true'
		? true
		: v === false || v === 0 || v === '0' || v === 'false'
			? false
			: undefined;

type Fields = Partial<
	Pick<
		Subscription,
		| 'event'
		| 'url'
		| 'signing_key'
		| 'auth_token'
		| 'auth_type'
		| 'content_type_header'
		| 'is_enabled'
	>
>;

/** Validates the supplied fields (create: event and url required). */
function validate(
	ctx: Ctx,
	body: Record<string, unknown>,
	creating: boolean,
): { fields: Fields } | { reject: Reply } {
	const errors: Record<string, string[]> = {};
	const fields: Fields = {};
	const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k);
	if (creating || has('event')) {
		if (typeof body.event !== 'string' || body.event === '')
			errors.event = ['The event field is required.'];
		else if (!ALL_EVENTS.includes(body.event)) errors.event = ['The selected event is invalid.'];
		else fields.event = body.event;
	}
	if (creating || has('url')) {
		const e = urlErrors(ctx, body.url);
		if (e) errors.url = e;
		else fields.url = body.url as string;
	}
	for (const k of ['signing_key', 'auth_token'] as const) {
		if (!has(k)) continue;
		const v = body[k];
		if (v === null || v === '') fields[k] = null;
		else if (typeof v === 'string') fields[k] = v;
		else errors[k] = [`The ${k.replace('_', ' ')} field must be a string.`];
	}
	if (has('auth_type')) {
		const v = body.auth_type;
		if (v === null || v === '') fields.auth_type = null;
		else if (typeof v === 'string' && AUTH_TYPES.includes(v)) fields.auth_type = v;
		else errors.auth_type = ['The selected auth type is invalid.'];
	}
	if (has('content_type_header')) {
		const v = body.content_type_header;
		if (typeof v === 'string' && CONTENT_TYPE_HEADERS.includes(v)) fields.content_type_header = v;
		else errors.content_type_header = ['The selected content type header is invalid.'];
	}
	if (has('is_enabled')) {
		const v = asBool(body.is_enabled);
		if (v === undefined) errors.is_enabled = ['The is enabled field must be true or false.'];
		else fields.is_enabled = v;
	}
	if (Object.keys(errors).length) return { reject: unprocessable(errors) };
	return { fields };
}

const live = (ctx: Ctx) =>
	[...ctx.sb.store.subscriptions.values()].filter(
		(s) => s.owner === ctx.user!.username && s.deleted_at === null,
	);

function duplicate(ctx: Ctx, event: string, url: string, exceptId?: number) {
	return live(ctx).some((s) => s.id !== exceptId && s.event === event && s.url === url);
}

const notFound = () => json(404, { message: 'Webhook not found.' });

function find(ctx: Ctx, id: string): Subscription | null {
	const n = toInt(id);
	const s = n !== null && !Number.isNaN(n) ? ctx.sb.store.subscriptions.get(n) : undefined;
	return s && s.owner === ctx.user!.username && s.deleted_at === null ? s : null;
}

// ---- operations ------------------------------------------------------------------------------

export const listEvents = (): Reply => json(200, { events: ALL_EVENTS });

export function listWebhooks(ctx: Ctx): Reply {
	const page = paginate(
		live(ctx).sort((a, b) => a.id - b.id),
		ctx.query,
	);
	return json(200, { data: page.data.map((s) => render(s)), meta: page.meta });
}

export function createWebhook(ctx: Ctx): Reply {
	const { store } = ctx.sb;
	const v = validate(ctx, ctx.body ?? {}, true);
	if ('reject' in v) return v.reject;
	const f = v.fields;
	if (live(ctx).length >= MAX_SUBSCRIPTIONS)
		return unprocessable({
			subscription: [`Maximum of ${MAX_SUBSCRIPTIONS} subscriptions per API key reached.`],
		});
	if (duplicate(ctx, f.event!, f.url!))
		return unprocessable({ url: ['A subscription for this event and URL already exists.'] });
	const now = store.now();
	const s: Subscription = {
		id: store.next('subscriptionId'),
		owner: ctx.user!.username,
		event: f.event!,
		url: f.url!,
		content_type_header: f.content_type_header ?? 'application/json',
		is_enabled: f.is_enabled ?? true,
		auth_type: f.auth_type ?? null,
		signing_key: f.signing_key ?? null,
		auth_token: f.auth_token ?? null,
		created_at: now,
		updated_at: now,
		deleted_at: null,
	};
	store.subscriptions.set(s.id, s);
	store.dirty();
	return json(201, render(s, { signing_key: true, auth_token: true }));
}

export function getWebhook(ctx: Ctx, id: string): Reply {
	const s = find(ctx, id);
	return s ? json(200, render(s)) : notFound();
}

/** PATCH and PUT alike: only the supplied fields change. */
export function updateWebhook(ctx: Ctx, id: string): Reply {
	const s = find(ctx, id);
	if (!s) return notFound();
	const body = ctx.body ?? {};
	const v = validate(ctx, body, false);
	if ('reject' in v) return v.reject;
	const f = v.fields;
	if (
		(f.event !== undefined || f.url !== undefined) &&
		duplicate(ctx, f.event ?? s.event, f.url ?? s.url, s.id)
	)
		return unprocessable({ url: ['A subscription for this event and URL already exists.'] });
	Object.assign(s, f);
	s.updated_at = ctx.sb.store.now();
	ctx.sb.store.dirty();
	const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k);
	return json(200, render(s, { signing_key: has('signing_key'), auth_token: has('auth_token') }));
}

export function deleteWebhook(ctx: Ctx, id: string): Reply {
	const s = find(ctx, id);
	if (!s) return notFound();
	s.deleted_at = ctx.sb.store.now();
	ctx.sb.store.dirty();
	return text(204, '');
}

/** Newest first (descending id), or oldest first (ascending id) under `logOrder: oldestFirst`. */
export function webhookLogs(ctx: Ctx, id: string): Reply {
	const s = find(ctx, id);
	if (!s) return notFound();
	const sign = ctx.sb.store.config.logOrder === 'oldestFirst' ? 1 : -1;
	const logs = [...ctx.sb.store.logs.values()]
		.filter((l) => l.subscriptionId === s.id)
		.sort((a, b) => sign * (a.id - b.id));
	const page = paginate(logs, ctx.query);
	return json(200, { data: page.data.map(renderLog), meta: page.meta });
}

/**
 * Redispatch: the logged delivery is re-sent at once (same event, the logged payload or, under
 * `redispatchPayload: current`, a completion payload rendered again; fresh `now`, a new non-empty
 * `delivery_id`). What happens to the entry and where the attempts are logged follows
 * `redispatchEntry` (deliveries.ts, `redispatch`). Allowed for any entry, failed or not. When the completion record the payload was built from no longer exists
 * (user/content deletion): 200 `{data: {success: false, message, event}}`, nothing sent; same for
 * a disabled webhook.
 */
export function redispatch(ctx: Ctx, id: string, logId: string): Reply {
	const s = find(ctx, id);
	if (!s) return notFound();
	const n = toInt(logId);
	const log = n !== null && !Number.isNaN(n) ? ctx.sb.store.logs.get(n) : undefined;
	if (!log || log.subscriptionId !== s.id) return json(404, { message: 'Log entry not found.' });
	const event = log.event_type;
	if (log.completionId !== null && !ctx.sb.store.feed.get(log.completionId))
		return json(200, {
			data: { success: false, message: 'The original payload no longer exists.', event },
		});
	if (!s.is_enabled)
		return json(200, { data: { success: false, message: 'The webhook is disabled.', event } });
	ctx.sb.deliveries.redispatch(s, log);
	ctx.sb.store.dirty();
	return json(200, { data: { success: true, message: 'Webhook queued for redispatch.', event } });
}

/**
 * Relay: a sample of a concrete event; without url returned in the body, with url POSTed there
 * once (no retries, no signature: there is no subscription). A network failure gives
 * `success: false`, `status_code: 0` and the error text in `data`.
 */
export async function relay(ctx: Ctx): Promise<Reply> {
	const body = ctx.body ?? {};
	const event = body.event;
	if (typeof event !== 'string' || event === '')
		return unprocessable({ event: ['The event field is required.'] });
	if (isWildcard(event))
		return unprocessable({ event: ['Wildcard events are not allowed for relay.'] });
	if (!CONCRETE_EVENTS.includes(event))
		return unprocessable({ event: ['The selected event is invalid.'] });
	const hasUrl = body.url !== undefined && body.url !== null && body.url !== '';
	if (hasUrl) {
		const e = urlErrors(ctx, body.url);
		if (e) return unprocessable({ url: e });
	}
	const { payload } = samplePayload(ctx.sb, event);
	const wire = ctx.sb.deliveries.body(event, payload, randomUUID());
	if (!hasUrl) return json(200, { data: { success: true, data: JSON.parse(wire) } });
	const res = await ctx.sb.deliveries.relay(body.url as string, event, wire);
	const ok = res.status_code !== null && res.status_code >= 200 && res.status_code < 300;
	return json(200, {
		data: {
			success: ok,
			data: res.error ?? res.response,
			status_code: res.status_code ?? 0,
			response_time_ms: res.response_time_ms,
		},
	});
}
