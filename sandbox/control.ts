/**
 * The control API (`/__sandbox/...`, JSON in and out, no auth, no User-Agent needed) used by
 * tests and demos to issue tokens, inspect requests and deliveries, tune the configuration,
 * inject faults, move the clock and simulate what happens inside the LMS.
 */
import { issueRefreshToken } from './auth';
import {
	Invalid,
	NotFound,
	generateRecords,
	simulateAccountMerge,
	simulateCompletion,
	simulateContentDeletion,
	simulateRecordChange,
	simulateReEnrolment,
	simulateUserDeletion,
	simulateUserUpdate,
} from './completions';
import { CONCRETE_EVENTS, userPayload } from './events';
import { renderCompletion } from './feed';
import type { FaultSpec } from './faults';
import type { Reply, Sandbox } from './http';
import { json } from './http';
import { ConfigError, patchedConfig, type SandboxConfig } from './store';
import { isoOffset, isoZ } from './util';

export const CONTROL_PREFIX = '/__sandbox';

function tokenGrant(sb: Sandbox, username: string) {
	const u = sb.store.apiUsers.get(username)!;
	return { username, tenancy_id: sb.tenancyId, base_url: sb.url, refresh_token: u.refreshToken };
}

function patchConfig(sb: Sandbox, body: Record<string, unknown>): SandboxConfig {
	try {
		sb.store.config = patchedConfig(sb.store.config, body);
	} catch (e) {
		if (e instanceof ConfigError) throw new Invalid(e.message);
		throw e;
	}
	return sb.store.config;
}

type Route = [
	method: string,
	pattern: RegExp,
	handler: (
		sb: Sandbox,
		m: RegExpExecArray,
		q: URLSearchParams,
		body: Record<string, unknown>,
	) => Reply | Promise<Reply>,
];

const routes: Route[] = [
	[
		'POST',
		/^\/refresh-tokens$/,
		(sb, _m, _q, b) => {
			const username =
				typeof b.username === 'string' && b.username ? b.username : sb.defaultUsername;
			issueRefreshToken(sb.store, username);
			return json(200, tokenGrant(sb, username));
		},
	],
	[
		'GET',
		/^\/auth\/([^/]+)$/,
		(sb, m) => {
			const u = sb.store.apiUsers.get(decodeURIComponent(m[1]));
			if (!u) throw new NotFound(`no API user ${decodeURIComponent(m[1])}`);
			return json(200, {
				username: u.username,
				refresh_token: u.refreshToken,
				api_key: u.apiKey || null,
				api_key_expires_at: u.apiKey ? isoZ(u.apiKeyExpiresAt) : null,
				exchanges: u.exchanges,
				failed_exchanges: u.failedExchanges,
			});
		},
	],
	[
		'POST',
		/^\/auth\/([^/]+)\/expire-api-key$/,
		(sb, m) => {
			const u = sb.store.apiUsers.get(decodeURIComponent(m[1]));
			if (!u) throw new NotFound(`no API user ${decodeURIComponent(m[1])}`);
			u.apiKeyExpiresAt = Math.min(u.apiKeyExpiresAt, sb.store.now() - 1000);
			sb.store.dirty();
			return json(200, { username: u.username, api_key_expires_at: isoZ(u.apiKeyExpiresAt) });
		},
	],
	[
		'GET',
		/^\/requests$/,
		(sb, _m, q) => {
			const username = q.get('username');
			const path = q.get('path');
			return json(
				200,
				sb.store.requestLog.filter(
					(e) => (!username || e.username === username) && (!path || e.path.includes(path)),
				),
			);
		},
	],
	[
		'DELETE',
		/^\/requests$/,
		(sb) => {
			const cleared = sb.store.requestLog.length;
			sb.store.requestLog = [];
			return json(200, { cleared });
		},
	],
	[
		'GET',
		/^\/stats$/,
		(sb) => {
			let exchanges = 0;
			let failed = 0;
			for (const u of sb.store.apiUsers.values()) {
				exchanges += u.exchanges;
				failed += u.failedExchanges;
			}
			const s = sb.store.stats;
			return json(200, {
				requests: s.requests,
				exchanges,
				failed_exchanges: failed,
				rate_limited: s.rate_limited,
				by_status: s.by_status,
			});
		},
	],
	[
		'GET',
		/^\/chat\/requests$/,
		(sb, _m, q) => {
			const api = q.get('api');
			return json(
				200,
				sb.chat.entries.filter((e) => !api || e.api === api),
			);
		},
	],
	['DELETE', /^\/chat\/requests$/, (sb) => json(200, { cleared: sb.chat.clear() })],
	['GET', /^\/config$/, (sb) => json(200, sb.store.config)],
	['PATCH', /^\/config$/, (sb, _m, _q, b) => json(200, patchConfig(sb, b))],
	['GET', /^\/faults$/, (sb) => json(200, { faults: sb.faults.list() })],
	[
		'PUT',
		/^\/faults$/,
		(sb, _m, _q, b) => {
			const specs = (
				Array.isArray(b) ? b : Array.isArray(b.faults) ? b.faults : [b]
			) as FaultSpec[];
			try {
				sb.faults.set(specs);
			} catch (e) {
				throw new Invalid((e as Error).message);
			}
			return json(200, { faults: sb.faults.list() });
		},
	],
	[
		'DELETE',
		/^\/faults$/,
		(sb) => {
			sb.faults.clear();
			return json(200, { faults: [] });
		},
	],
	[
		'POST',
		/^\/simulate\/completion$/,
		(sb, _m, _q, b) => {
			const rec = simulateCompletion(sb, b);
			return json(200, { completion: renderCompletion(sb.store, rec) });
		},
	],
	[
		'POST',
		/^\/simulate\/record-change$/,
		(sb, _m, _q, b) =>
			json(200, {
				completion: renderCompletion(sb.store, simulateRecordChange(sb, b.completionId)),
			}),
	],
	[
		'POST',
		/^\/simulate\/re-enrolment$/,
		(sb, _m, _q, b) => {
			const r = simulateReEnrolment(sb, b.completionId);
			return json(200, {
				archived: renderCompletion(sb.store, r.archived),
				created: renderCompletion(sb.store, r.created),
			});
		},
	],
	[
		'POST',
		/^\/simulate\/user-update$/,
		(sb, _m, _q, b) => json(200, { user: userPayload(simulateUserUpdate(sb, b)) }),
	],
	[
		'POST',
		/^\/simulate\/user-deletion$/,
		(sb, _m, _q, b) => json(200, simulateUserDeletion(sb, b.userId)),
	],
	[
		'POST',
		/^\/simulate\/content-deletion$/,
		(sb, _m, _q, b) => json(200, simulateContentDeletion(sb, b.contentId)),
	],
	[
		'POST',
		/^\/simulate\/account-merge$/,
		(sb, _m, _q, b) => {
			const r = simulateAccountMerge(sb, b.fromUserId, b.toUserId);
			return json(200, {
				retired: r.retired,
				created: r.created.map((c) => renderCompletion(sb.store, c)),
			});
		},
	],
	[
		'POST',
		/^\/simulate\/event$/,
		(sb, _m, _q, b) => {
			if (typeof b.event !== 'string' || !CONCRETE_EVENTS.includes(b.event))
				throw new Invalid('event must be a concrete event name (wildcards cannot happen)');
			const deliveries = sb.deliveries.dispatch(b.event, b.payload ?? {});
			return json(200, { event: b.event, deliveries });
		},
	],
	[
		'GET',
		/^\/deliveries$/,
		(sb, _m, q) => {
			const sub = q.get('subscriptionId');
			const username = q.get('username');
			return json(
				200,
				sb.store.attempts.filter(
					(a) =>
						(!sub || String(a.subscription_id) === sub) && (!username || a.username === username),
				),
			);
		},
	],
	['GET', /^\/deliveries\/pending$/, (sb) => json(200, { pending: sb.deliveries.pending })],
	[
		'GET',
		/^\/subscriptions$/,
		(sb, _m, q) => {
			const username = q.get('username');
			return json(
				200,
				[...sb.store.subscriptions.values()]
					.filter((s) => !username || s.owner === username)
					.map((s) => ({
						id: s.id,
						username: s.owner,
						event: s.event,
						url: s.url,
						content_type_header: s.content_type_header,
						is_enabled: s.is_enabled,
						auth_type: s.auth_type,
						signing_key: s.signing_key,
						auth_token: s.auth_token,
						created_at: isoOffset(s.created_at),
						updated_at: isoOffset(s.updated_at),
						deleted_at: s.deleted_at === null ? null : isoOffset(s.deleted_at),
					})),
			);
		},
	],
	[
		'POST',
		/^\/feed\/generate$/,
		(sb, _m, _q, b) => {
			const count = b.count;
			if (typeof count !== 'number' || !Number.isInteger(count) || count < 0)
				throw new Invalid('count must be a non-negative integer');
			return json(200, {
				total: generateRecords(
					sb,
					count,
					typeof b.contentType === 'string' ? b.contentType : undefined,
				),
			});
		},
	],
	['GET', /^\/clock$/, (sb) => json(200, { now: sb.store.now(), iso: isoZ(sb.store.now()) })],
	[
		'POST',
		/^\/clock$/,
		(sb, _m, _q, b) => {
			if (typeof b.advanceMs !== 'number' || !Number.isFinite(b.advanceMs))
				throw new Invalid('advanceMs must be a number');
			sb.store.clockOffset += b.advanceMs;
			sb.store.dirty();
			return json(200, { now: sb.store.now(), iso: isoZ(sb.store.now()) });
		},
	],
	[
		'POST',
		/^\/reset$/,
		(sb) => {
			sb.reset();
			return json(200, tokenGrant(sb, sb.defaultUsername));
		},
	],
	[
		'GET',
		/^\/demo$/,
		(sb) => {
			const { store } = sb;
			return json(200, {
				tenancy_id: sb.tenancyId,
				users: [...store.learners.values()].map((l) => ({
					id: l.id,
					username: l.username,
					suspended: l.suspended,
					deleted: l.deleted,
				})),
				content: [...store.contents.values()].map((c) => ({
					id: c.id,
					fullname: c.fullname,
					contenttype: c.contenttype,
					deleted: c.deleted,
					activities: c.activities.map((a) => a.id),
					sessions: c.sessions.map((s) => s.id),
				})),
				completions: store.feed.size,
			});
		},
	],
	[
		'GET',
		/^\/completions\/(\d+)$/,
		(sb, m) => {
			const rec = sb.store.feed.get(Number(m[1]));
			if (!rec) throw new NotFound(`completion ${m[1]} not found`);
			return json(200, { completion: renderCompletion(sb.store, rec) });
		},
	],
];

export async function control(
	sb: Sandbox,
	method: string,
	subpath: string,
	q: URLSearchParams,
	body: unknown,
): Promise<Reply> {
	const candidates = routes.filter(([, re]) => re.test(subpath));
	const route = candidates.find(([m]) => m === method);
	if (!route)
		return candidates.length
			? json(405, { error: 'method not allowed' })
			: json(404, { error: `no control route ${method} ${CONTROL_PREFIX}${subpath}` });
	try {
		return await route[2](sb, route[1].exec(subpath)!, q, (body ?? {}) as Record<string, unknown>);
	} catch (e) {
		if (e instanceof NotFound) return json(404, { error: e.message });
		if (e instanceof Invalid) return json(400, { error: e.message });
		throw e;
	}
}
