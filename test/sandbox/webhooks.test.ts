import { startSandbox } from '../../sandbox';
import { Api, http, receiver, useSandbox } from './helpers';

const ctx = useSandbox({ deliveryBackoffMs: 10 });

const BULLETS = '\u2022'.repeat(8);
const OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
let n = 0;
const hookUrl = () => `https://hooks.example.com/h/${++n}`;
const create = (a: Api, body: Record<string, unknown>) => a.send('POST', a.r.webhook, body);

describe('events (operation 7)', () => {
	it('lists every event name of the spec table plus the five wildcards, with single backslashes', async () => {
		const res = await ctx.api.get(`${ctx.api.r.webhook}/events`);
		expect(res.status).toBe(200);
		const events: string[] = res.json.events;
		expect(events).toHaveLength(14 + 5 + 4 + 1 + 5);
		expect(events).toEqual(
			expect.arrayContaining([
				'Events\\Notifications\\Duedate',
				'Events\\Notifications\\Instructor_unassignment',
				'Events\\Users\\Tenancy_removed',
				'Events\\Courses\\Completion_created',
				'Events\\Courses\\Completion_archived',
				'Events\\Quiz\\Attempt_completed',
				'Events\\Notifications\\*',
				'Events\\Users\\*',
				'Events\\Courses\\*',
				'Events\\Quiz\\*',
				'*',
			]),
		);
		expect(res.text).toContain('"Events\\\\Courses\\\\Completion_created"'); // JSON-escaped single backslash
	});
});

describe('create / get / list / update / delete', () => {
	it('creates (201, secrets unmasked), then masks them in get and list', async () => {
		const url = hookUrl();
		const res = await create(ctx.api, {
			event: 'Events\\Courses\\Completion_created',
			url,
			signing_key: 'sign-key-ABCD',
			auth_token: 'tok-WXYZ',
			auth_type: 'both',
			content_type_header: 'application/x-www-form-urlencoded',
			is_enabled: true,
		});
		expect(res.status).toBe(201);
		expect(res.json).toEqual({
			id: expect.any(Number),
			event: 'Events\\Courses\\Completion_created',
			url,
			content_type_header: 'application/x-www-form-urlencoded',
			is_enabled: true,
			auth_type: 'both',
			signing_key: 'sign-key-ABCD',
			auth_token: 'tok-WXYZ',
			created_at: expect.stringMatching(OFFSET),
			updated_at: expect.stringMatching(OFFSET),
		});
		const id = res.json.id;
		const got = await ctx.api.get(`${ctx.api.r.webhook}/${id}`);
		expect(got.status).toBe(200);
		expect(got.json.signing_key).toBe(`${BULLETS}ABCD`);
		expect(got.json.auth_token).toBe(`${BULLETS}WXYZ`);
		const list = await ctx.api.get(ctx.api.r.webhook, { perPage: 100 });
		expect(list.json.data.find((s: any) => s.id === id)).toEqual(got.json);
	});

	it('defaults: enabled, application/json, no auth, null secrets', async () => {
		const res = await create(ctx.api, { event: '*', url: hookUrl() });
		expect(res.status).toBe(201);
		expect(res.json).toMatchObject({
			is_enabled: true,
			content_type_header: 'application/json',
			auth_type: null,
			signing_key: null,
			auth_token: null,
		});
		expect((await ctx.api.get(`${ctx.api.r.webhook}/${res.json.id}`)).json).toMatchObject({
			signing_key: null,
			auth_token: null,
		});
	});

	it('accepts every wildcard; rejects unknown events and non-HTTPS urls with Laravel-style 422', async () => {
		for (const event of [
			'*',
			'Events\\Notifications\\*',
			'Events\\Users\\*',
			'Events\\Courses\\*',
			'Events\\Quiz\\*',
		])
			expect((await create(ctx.api, { event, url: hookUrl() })).status).toBe(201);
		const http1 = await create(ctx.api, { event: '*', url: 'http://hooks.example.com/plain' });
		expect(http1.status).toBe(422);
		expect(http1.json).toEqual({
			message: expect.any(String),
			errors: { url: [expect.stringContaining('https://')] },
		});
		const bad = await create(ctx.api, { event: 'Events\\Courses\\Nope', url: 'not a url' });
		expect(bad.status).toBe(422);
		expect(Object.keys(bad.json.errors).sort()).toEqual(['event', 'url']);
		const missing = await create(ctx.api, {});
		expect(Object.keys(missing.json.errors).sort()).toEqual(['event', 'url']);
	});

	it('422 on a duplicate event+url pair; the same url with another event is fine', async () => {
		const url = hookUrl();
		expect((await create(ctx.api, { event: 'Events\\Users\\Created', url })).status).toBe(201);
		const dup = await create(ctx.api, { event: 'Events\\Users\\Created', url });
		expect(dup.status).toBe(422);
		expect(dup.json.message).toMatch(/already exists/);
		expect((await create(ctx.api, { event: 'Events\\Users\\Updated', url })).status).toBe(201);
	});

	it('update (PATCH = PUT) changes only supplied fields; secrets unmasked only when sent', async () => {
		const c = (
			await create(ctx.api, {
				event: 'Events\\Quiz\\Attempt_completed',
				url: hookUrl(),
				signing_key: 'aaaa1111',
				auth_token: 'bbbb2222',
			})
		).json;
		const p = await ctx.api.send('PATCH', `${ctx.api.r.webhook}/${c.id}`, { is_enabled: false });
		expect(p.status).toBe(200);
		expect(p.json).toMatchObject({
			...c,
			is_enabled: false,
			signing_key: `${BULLETS}1111`,
			auth_token: `${BULLETS}2222`,
			updated_at: expect.any(String),
		});
		const q = await ctx.api.send('PUT', `${ctx.api.r.webhook}/${c.id}`, {
			signing_key: 'cccc3333',
		});
		expect(q.json).toMatchObject({
			is_enabled: false,
			signing_key: 'cccc3333',
			auth_token: `${BULLETS}2222`,
			url: c.url,
		});
		const r = await ctx.api.send('PUT', `${ctx.api.r.webhook}/${c.id}`, {
			auth_token: null,
			is_enabled: true,
		});
		expect(r.json).toMatchObject({
			is_enabled: true,
			auth_token: null,
			signing_key: `${BULLETS}3333`,
		});
		const bad = await ctx.api.send('PATCH', `${ctx.api.r.webhook}/${c.id}`, {
			url: 'http://insecure.example.com',
		});
		expect(bad.status).toBe(422);
		expect(bad.json.errors.url).toBeDefined();
		const other = (
			await create(ctx.api, { event: 'Events\\Quiz\\Attempt_completed', url: hookUrl() })
		).json;
		const clash = await ctx.api.send('PATCH', `${ctx.api.r.webhook}/${other.id}`, { url: c.url });
		expect(clash.status).toBe(422);
	});

	it('delete: 204 empty text/plain, soft (kept, hidden); then 404 JSON; unknown ids 404', async () => {
		const c = (
			await create(ctx.api, {
				event: 'Events\\Users\\Deleted',
				url: hookUrl(),
				signing_key: 'zzzz9999',
			})
		).json;
		const del = await ctx.api.send('DELETE', `${ctx.api.r.webhook}/${c.id}`);
		expect(del.status).toBe(204);
		expect(del.text).toBe('');
		expect(del.headers['content-type']).toMatch(/^text\/plain/);
		for (const [m, u] of [
			['GET', `${ctx.api.r.webhook}/${c.id}`],
			['PATCH', `${ctx.api.r.webhook}/${c.id}`],
			['DELETE', `${ctx.api.r.webhook}/${c.id}`],
			['GET', `${ctx.api.r.webhook}/${c.id}/logs`],
			['GET', `${ctx.api.r.webhook}/999999`],
			['GET', `${ctx.api.r.webhook}/abc`],
		]) {
			const res = await ctx.api.send(m, u, m === 'PATCH' ? {} : undefined);
			expect([m, u, res.status, res.json]).toEqual([m, u, 404, { message: 'Webhook not found.' }]);
		}
		const list = await ctx.api.get(ctx.api.r.webhook, { perPage: 100 });
		expect(list.json.data.some((s: any) => s.id === c.id)).toBe(false);
		const kept = (await ctx.sb.control.subscriptions(ctx.api.username)).find((s) => s.id === c.id)!;
		expect(kept).toMatchObject({
			signing_key: 'zzzz9999',
			deleted_at: expect.stringMatching(OFFSET),
		});
		// deleting frees the event+url pair
		expect((await create(ctx.api, { event: 'Events\\Users\\Deleted', url: c.url })).status).toBe(
			201,
		);
	});

	it("another API user cannot see or touch a user's subscriptions", async () => {
		const other = await Api.login(ctx.sb);
		const c = (await create(ctx.api, { event: 'Events\\Users\\Updated', url: hookUrl() })).json;
		expect((await other.get(`${other.r.webhook}/${c.id}`)).status).toBe(404);
		expect((await other.get(other.r.webhook)).json.meta.total).toBe(0);
		// the same pair is not a duplicate for another user
		expect((await create(other, { event: 'Events\\Users\\Updated', url: c.url })).status).toBe(201);
	});
});

describe('limits and pagination', () => {
	it('100 subscriptions per API key; the 101st is 422; deleting one frees a slot; subscriptions survive key rotation', async () => {
		const a = await Api.login(ctx.sb);
		const ids: number[] = [];
		for (let i = 0; i < 100; i++) {
			const res = await create(a, {
				event: 'Events\\Courses\\Completion_updated',
				url: `https://cap.example.com/${i}`,
			});
			expect(res.status).toBe(201);
			ids.push(res.json.id);
		}
		await a.refresh(); // a new key string: same credential, same subscriptions and cap
		const over = await create(a, {
			event: 'Events\\Courses\\Completion_updated',
			url: 'https://cap.example.com/100',
		});
		expect(over.status).toBe(422);
		expect(over.json.message).toMatch(/maximum of 100 subscriptions/i);
		expect(over.json.errors).toBeDefined();

		const page = async (q: Record<string, string | number>) => (await a.get(a.r.webhook, q)).json;
		const def = await page({});
		expect(def.data).toHaveLength(50);
		expect(def.meta).toEqual({
			current_page: 1,
			per_page: 50,
			total: 100,
			last_page: 2,
			next: null,
			prev: null,
		});
		expect((await page({ perPage: 500 })).meta).toMatchObject({ per_page: 100, last_page: 1 });
		expect((await page({ perPage: 0 })).meta).toMatchObject({ per_page: 1, last_page: 100 });
		expect((await page({ perPage: -5 })).data).toHaveLength(1);
		const p3 = await page({ perPage: 30, page: 4 });
		expect(p3.data.map((s: any) => s.id)).toEqual(ids.slice(90, 100));
		expect((await page({ perPage: 30, page: 9 })).data).toEqual([]);

		expect((await a.send('DELETE', `${a.r.webhook}/${ids[0]}`)).status).toBe(204);
		expect(
			(
				await create(a, {
					event: 'Events\\Courses\\Completion_updated',
					url: 'https://cap.example.com/100',
				})
			).status,
		).toBe(201);
	});
});

describe('logs, redispatch and relay', () => {
	it('logs list every delivery of a subscription (newest first) without the payload; redispatch re-sends it', async () => {
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			deliveryBackoffMs: 5,
			rateLimitPerMinute: 10_000,
		});
		const rx = await receiver({ status: (i) => (i <= 3 ? 503 : 200), reply: 'thanks' });
		try {
			const a = await Api.login(own);
			const sub = (await create(a, { event: 'Events\\Courses\\*', url: `${rx.url}/in` })).json;
			await own.control.simulateEvent('Events\\Courses\\Completion_deleted', {
				completion: { id: 1 },
			});
			await own.control.waitForDeliveries({ subscriptionId: sub.id }, 3);
			await own.control.simulateCompletion();
			await own.control.waitForDeliveries({ subscriptionId: sub.id }, 4);
			const logs = (await a.get(`${a.r.webhook}/${sub.id}/logs`)).json;
			expect(logs.meta).toEqual({
				current_page: 1,
				per_page: 50,
				total: 2,
				last_page: 1,
				next: null,
				prev: null,
			});
			const [newest, failed] = logs.data;
			expect(newest).toEqual({
				id: expect.any(Number),
				event_type: 'Events\\Courses\\Completion_created',
				delivery_id: '',
				success: true,
				tries: 1,
				status_code: 200,
				response: 'thanks',
				response_time_ms: expect.any(Number),
				redispatched: false,
				created_at: expect.stringMatching(OFFSET),
				updated_at: expect.stringMatching(OFFSET),
			});
			expect(failed).toMatchObject({
				event_type: 'Events\\Courses\\Completion_deleted',
				success: false,
				tries: 3,
				status_code: 503,
				redispatched: false,
			});

			const rd = await a.send('POST', `${a.r.webhook}/${sub.id}/logs/${failed.id}/redispatch`);
			expect(rd.status).toBe(200);
			expect(rd.json).toEqual({
				data: {
					success: true,
					message: expect.any(String),
					event: 'Events\\Courses\\Completion_deleted',
				},
			});
			await own.control.waitForDeliveries({ subscriptionId: sub.id }, 5);
			const after = (await a.get(`${a.r.webhook}/${sub.id}/logs`)).json.data.find(
				(l: any) => l.id === failed.id,
			);
			expect(after).toMatchObject({
				success: true,
				tries: 4,
				status_code: 200,
				redispatched: true,
				delivery_id: expect.stringMatching(/.+/),
			});
			const last = JSON.parse(rx.received.at(-1)!.raw.toString());
			expect(last).toMatchObject({
				event: 'Events\\Courses\\Completion_deleted',
				payload: { completion: { id: 1 } },
				delivery_id: after.delivery_id,
			});

			expect((await a.send('POST', `${a.r.webhook}/${sub.id}/logs/999999/redispatch`)).status).toBe(
				404,
			);
			expect(
				(await a.get(`${a.r.webhook}/${sub.id}/logs`, { perPage: 1, page: 2 })).json.data.map(
					(l: any) => l.id,
				),
			).toEqual([failed.id]);
		} finally {
			await own.close();
			await rx.close();
		}
	});

	it('redispatch when the payload model no longer exists: success false, nothing sent', async () => {
		const own = await startSandbox({ allowHttpWebhookUrls: true, rateLimitPerMinute: 10_000 });
		const rx = await receiver();
		try {
			const a = await Api.login(own);
			const sub = (await create(a, { event: 'Events\\Courses\\Completion_created', url: rx.url }))
				.json;
			const { completion } = await own.control.simulateCompletion();
			await own.control.waitForDeliveries({ subscriptionId: sub.id }, 1);
			await own.control.simulateUserDeletion(completion.userid);
			const log = (await a.get(`${a.r.webhook}/${sub.id}/logs`)).json.data[0];
			const rd = await a.send('POST', `${a.r.webhook}/${sub.id}/logs/${log.id}/redispatch`);
			expect(rd.json.data).toMatchObject({
				success: false,
				event: 'Events\\Courses\\Completion_created',
			});
			await new Promise((r) => setTimeout(r, 100));
			expect(rx.received).toHaveLength(1);
		} finally {
			await own.close();
			await rx.close();
		}
	});

	it('relay without url returns a sample and delivers nothing', async () => {
		const sub = (await create(ctx.api, { event: '*', url: hookUrl() })).json;
		const before = (await ctx.sb.control.deliveries({ subscriptionId: sub.id })).length;
		const res = await ctx.api.send('POST', `${ctx.api.r.webhook}/relay`, {
			event: 'Events\\Courses\\Completion_created',
		});
		expect(res.status).toBe(200);
		expect(res.json).toEqual({
			data: {
				success: true,
				data: {
					event: 'Events\\Courses\\Completion_created',
					payload: { completion: expect.any(Object) },
					now: expect.any(Number),
					delivery_id: expect.any(String),
					api_version: '2.0',
				},
			},
		});
		expect(Math.abs(res.json.data.data.now - Date.now() / 1000)).toBeLessThan(5);
		const c = res.json.data.data.payload.completion;
		expect(Object.keys(c).sort()).toEqual(
			[
				'id',
				'user_id',
				'user',
				'userdata',
				'content_id',
				'content_type',
				'content',
				'contentdata',
				'certificate_link',
				'time_enrolled',
				'time_started',
				'time_completed',
			].sort(),
		);
		await new Promise((r) => setTimeout(r, 50));
		expect((await ctx.sb.control.deliveries({ subscriptionId: sub.id })).length).toBe(before);
	});

	it('relay with a wildcard or unknown event: 422; with a non-https url: 422', async () => {
		for (const event of ['*', 'Events\\Users\\*']) {
			const res = await ctx.api.send('POST', `${ctx.api.r.webhook}/relay`, { event });
			expect(res.status).toBe(422);
			expect(res.json.message).toMatch(/wildcard events are not allowed for relay/i);
		}
		expect(
			(await ctx.api.send('POST', `${ctx.api.r.webhook}/relay`, { event: 'Events\\Nope\\X' }))
				.status,
		).toBe(422);
		expect(
			(
				await ctx.api.send('POST', `${ctx.api.r.webhook}/relay`, {
					event: 'Events\\Users\\Created',
					url: 'http://x.example.com',
				})
			).status,
		).toBe(422);
	});

	it('relay with url delivers the sample there (https, trusted CA) and returns the raw response', async () => {
		const { fixture } = await import('./helpers');
		const own = await startSandbox({ trustedCaPem: fixture('ca.pem'), rateLimitPerMinute: 10_000 });
		const rx = await receiver({ tls: true, status: () => 202, reply: '{"accepted":true}' });
		try {
			const a = await Api.login(own);
			const res = await a.send('POST', `${a.r.webhook}/relay`, {
				event: 'Events\\Users\\Created',
				url: `${rx.url}/relay-target`,
			});
			expect(res.json).toEqual({
				data: {
					success: true,
					data: '{"accepted":true}',
					status_code: 202,
					response_time_ms: expect.any(Number),
				},
			});
			expect(rx.received).toHaveLength(1);
			expect(rx.received[0].path).toBe('/relay-target');
			expect(JSON.parse(rx.received[0].raw.toString())).toMatchObject({
				event: 'Events\\Users\\Created',
				api_version: '2.0',
				payload: { user: expect.any(Object) },
			});
			const down = await a.send('POST', `${a.r.webhook}/relay`, {
				event: 'Events\\Users\\Created',
				url: 'https://127.0.0.1:1/',
			});
			expect(down.json.data).toMatchObject({
				success: false,
				status_code: 0,
				data: expect.any(String),
			});
		} finally {
			await own.close();
			await rx.close();
		}
	});
});

describe('request bodies', () => {
	it('accepts form-encoded bodies too', async () => {
		const res = await http('POST', ctx.api.r.webhook, {
			token: ctx.api.apiKey,
			form: { event: 'Events\\Users\\Tenancy_added', url: hookUrl(), is_enabled: 'false' },
		});
		expect(res.status).toBe(201);
		expect(res.json.is_enabled).toBe(false);
	});
	it('malformed JSON is 400; an empty body is a 422 (no fields)', async () => {
		const bad = await http('POST', ctx.api.r.webhook, { token: ctx.api.apiKey, raw: '{"event": ' });
		expect(bad.status).toBe(400);
		expect(bad.json.message).toMatch(/not valid JSON/);
		const empty = await http('POST', ctx.api.r.webhook, { token: ctx.api.apiKey, raw: '' });
		expect(empty.status).toBe(422);
	});
});
