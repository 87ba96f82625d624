import { createHmac, timingSafeEqual } from 'node:crypto';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { Api, fixture, receiver } from './helpers';

let sb: SandboxHandle;
let rx: Awaited<ReturnType<typeof receiver>>;
beforeAll(async () => {
	sb = await startSandbox({
		trustedCaPem: fixture('ca.pem'),
		rateLimitPerMinute: 10_000,
		deliveryBackoffMs: 10,
	});
	rx = await receiver({ tls: true });
});
afterAll(async () => {
	await sb.close();
	await rx.close();
});

const OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const create = (a: Api, body: Record<string, unknown>) => a.send('POST', a.r.webhook, body);
const forPath = (p: string) => rx.received.filter((r) => r.path === p);
const waitReceived = async (p: string, n: number, ms = 5000) => {
	const end = Date.now() + ms;
	while (forPath(p).length < n) {
		if (Date.now() > end)
			throw new Error(`expected ${n} deliveries at ${p}, got ${forPath(p).length}`);
		await new Promise((r) => setTimeout(r, 10));
	}
	return forPath(p);
};

describe('a real delivery over https (self-signed CA trusted by the sandbox)', () => {
	it('POSTs application/json, HMAC-SHA256 hex of the exact bytes in X-Signature, bearer token, Completion_created payload per rule 8', async () => {
		const a = await Api.login(sb);
		const signingKey = 'whsec_test_6f1d2c';
		const sub = (
			await create(a, {
				event: 'Events\\Courses\\Completion_created',
				url: `${rx.url}/signed`,
				signing_key: signingKey,
				auth_token: 'bearer-for-receiver',
				content_type_header: 'application/x-www-form-urlencoded', // label only
				auth_type: 'hmac', // label only: the token is still sent
			})
		).json;
		const { completion } = await sb.control.simulateCompletion({ userId: 5, contentId: 104 });
		const [got] = await waitReceived('/signed', 1);

		expect(got.headers['content-type']).toBe('application/json');
		expect(got.headers['user-agent']).toEqual(expect.any(String));
		expect(got.headers.authorization).toBe('Bearer bearer-for-receiver');
		const expected = createHmac('sha256', signingKey).update(got.raw).digest('hex');
		const sig = String(got.headers['x-signature']);
		expect(sig).toMatch(/^[0-9a-f]{64}$/);
		expect(timingSafeEqual(Buffer.from(sig), Buffer.from(expected))).toBe(true);

		const body = JSON.parse(got.raw.toString('utf8'));
		expect(Object.keys(body)).toEqual(['event', 'payload', 'now', 'delivery_id', 'api_version']);
		expect(body).toMatchObject({
			event: 'Events\\Courses\\Completion_created',
			delivery_id: '',
			api_version: '2.0',
		});
		expect(Number.isInteger(body.now)).toBe(true);
		expect(Math.abs(body.now - Date.now() / 1000)).toBeLessThan(10);
		const c = body.payload.completion;
		expect(c).toEqual({
			id: completion.completionid,
			user_id: 5,
			user: {
				id: 5,
				username: completion.username,
				email: expect.stringContaining('@'),
				firstname: expect.any(String),
				lastname: expect.any(String),
			},
			userdata: expect.any(Array),
			content_id: 104,
			content_type: 'Course',
			content: {
				id: 104,
				fullname: completion.contentname,
				summary: expect.any(String),
				timecreated: expect.any(Number),
			},
			contentdata: expect.any(Array),
			certificate_link: expect.any(String),
			time_enrolled: expect.stringMatching(OFFSET),
			time_started: expect.stringMatching(OFFSET),
			time_completed: expect.stringMatching(OFFSET),
		});
		expect(c.time_completed).toBe(completion.timecompleted);

		// the control API shows the exact bytes and headers sent
		const [attempt] = await sb.control.waitForDeliveries({ subscriptionId: sub.id }, 1);
		expect(attempt).toMatchObject({
			subscription_id: sub.id,
			url: `${rx.url}/signed`,
			event: 'Events\\Courses\\Completion_created',
			attempt: 1,
			status_code: 200,
			error: null,
		});
		expect(attempt.body).toBe(got.raw.toString('utf8'));
		expect(attempt.headers['x-signature']).toBe(sig);
		expect(attempt.headers.authorization).toBe('Bearer bearer-for-receiver');
	});

	it('without secrets: no X-Signature, no Authorization', async () => {
		const a = await Api.login(sb);
		await create(a, { event: 'Events\\Users\\Deleted', url: `${rx.url}/plain` });
		const demo = await sb.control.demo();
		const victim = demo.users.filter((u) => !u.deleted).at(-1)!;
		await sb.control.simulateUserDeletion(victim.id);
		const [got] = await waitReceived('/plain', 1);
		expect(got.headers['x-signature']).toBeUndefined();
		expect(got.headers.authorization).toBeUndefined();
		expect(JSON.parse(got.raw.toString())).toMatchObject({
			event: 'Events\\Users\\Deleted',
			payload: { user: { id: victim.id, username: victim.username } },
		});
	});

	it('wildcards match their category; disabled and deleted subscriptions receive nothing', async () => {
		const a = await Api.login(sb);
		const mk = async (event: string, path: string) =>
			(await create(a, { event, url: `${rx.url}${path}` })).json;
		await mk('*', '/all');
		await mk('Events\\Courses\\*', '/courses');
		await mk('Events\\Users\\*', '/users');
		const off = await mk('Events\\Courses\\Completion_updated', '/disabled');
		await a.send('PATCH', `${a.r.webhook}/${off.id}`, { is_enabled: false });
		const gone = await mk('Events\\Courses\\Completion_updated', '/deleted');
		await a.send('DELETE', `${a.r.webhook}/${gone.id}`);

		const { completion } = await sb.control.simulateCompletion();
		await sb.control.simulateRecordChange(completion.completionid);
		await sb.control.simulateEvent('Events\\Quiz\\Attempt_completed', { attempt: { id: 7 } });
		await waitReceived('/all', 3);
		await waitReceived('/courses', 2);
		await new Promise((r) => setTimeout(r, 100));
		// deliveries run concurrently: arrival order is not guaranteed
		expect(
			forPath('/all')
				.map((r) => JSON.parse(r.raw.toString()).event)
				.sort(),
		).toEqual([
			'Events\\Courses\\Completion_created',
			'Events\\Courses\\Completion_updated',
			'Events\\Quiz\\Attempt_completed',
		]);
		expect(forPath('/courses')).toHaveLength(2);
		expect(forPath('/users')).toHaveLength(0);
		expect(forPath('/disabled')).toHaveLength(0);
		expect(forPath('/deleted')).toHaveLength(0);
		const quiz = forPath('/all')
			.map((r) => JSON.parse(r.raw.toString()))
			.find((b) => b.event === 'Events\\Quiz\\Attempt_completed');
		expect(quiz.payload).toEqual({ attempt: { id: 7 } });
	});

	it('re-enrolment fires Completion_archived then Completion_created', async () => {
		const a = await Api.login(sb);
		await create(a, { event: 'Events\\Courses\\*', url: `${rx.url}/reenrol` });
		const { completion } = await sb.control.simulateCompletion({ userId: 6, contentId: 106 });
		const { archived, created } = await sb.control.simulateReEnrolment(completion.completionid);
		const got = await waitReceived('/reenrol', 3);
		const bodies = got.map((r) => JSON.parse(r.raw.toString()));
		const seen = bodies.map((b) => [b.event, b.payload.completion.id]);
		expect(seen).toHaveLength(3);
		expect(seen).toEqual(
			expect.arrayContaining([
				['Events\\Courses\\Completion_created', completion.completionid],
				['Events\\Courses\\Completion_archived', archived.completionid],
				['Events\\Courses\\Completion_created', created.completionid],
			]),
		);
		expect(archived.completionid).toBe(completion.completionid);
		expect(created.completionid).not.toBe(completion.completionid);
	});
});

describe('retries and failures', () => {
	it('non-2xx is retried with back-off up to deliveryMaxAttempts, re-sending the same bytes; each attempt logged', async () => {
		const flaky = await receiver({ status: (i) => (i < 3 ? 500 : 204) });
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			deliveryBackoffMs: 20,
			deliveryMaxAttempts: 3,
			rateLimitPerMinute: 10_000,
		});
		try {
			const a = await Api.login(own);
			const sub = (
				await create(a, {
					event: 'Events\\Users\\Created',
					url: `${flaky.url}/x`,
					signing_key: 'k',
				})
			).json;
			await own.control.simulateEvent('Events\\Users\\Created', { user: { id: 1 } });
			const attempts = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 3);
			expect(attempts.map((x) => [x.attempt, x.status_code])).toEqual([
				[1, 500],
				[2, 500],
				[3, 204],
			]);
			expect(new Set(flaky.received.map((r) => r.raw.toString())).size).toBe(1);
			const gap1 = Date.parse(attempts[1].at) - Date.parse(attempts[0].at);
			expect(gap1).toBeGreaterThanOrEqual(0);
			const log = (await a.get(`${a.r.webhook}/${sub.id}/logs`)).json.data[0];
			expect(log).toMatchObject({ success: true, tries: 3, status_code: 204 });
		} finally {
			await own.close();
			await flaky.close();
		}
	});

	it('gives up after deliveryMaxAttempts; network errors and untrusted certificates are failures with an error text', async () => {
		const own = await startSandbox({
			deliveryBackoffMs: 5,
			deliveryMaxAttempts: 2,
			rateLimitPerMinute: 10_000,
		}); // no trusted CA
		try {
			const a = await Api.login(own);
			const untrusted = (
				await create(a, { event: 'Events\\Users\\Updated', url: `${rx.url}/untrusted` })
			).json;
			const closed = (
				await create(a, { event: 'Events\\Users\\Updated', url: 'https://127.0.0.1:1/closed' })
			).json;
			await own.control.simulateEvent('Events\\Users\\Updated', {});
			const u = await own.control.waitForDeliveries({ subscriptionId: untrusted.id }, 2);
			const c = await own.control.waitForDeliveries({ subscriptionId: closed.id }, 2);
			await new Promise((r) => setTimeout(r, 60));
			expect((await own.control.deliveries({ subscriptionId: untrusted.id })).length).toBe(2);
			for (const x of [...u, ...c])
				expect(x).toMatchObject({ status_code: null, error: expect.any(String) });
			expect(u[0].error).toMatch(/certificate/i);
			expect(forPath('/untrusted')).toHaveLength(0);
			const log = (await a.get(`${a.r.webhook}/${closed.id}/logs`)).json.data[0];
			expect(log).toMatchObject({
				success: false,
				tries: 2,
				status_code: null,
				response: expect.any(String),
			});
		} finally {
			await own.close();
		}
	});

	it('a slow endpoint times out after deliveryTimeoutMs', async () => {
		const { createServer } = await import('node:http');
		const slow = createServer(() => undefined); // never answers
		await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
		const port = (slow.address() as import('node:net').AddressInfo).port;
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			deliveryTimeoutMs: 150,
			deliveryMaxAttempts: 1,
			rateLimitPerMinute: 10_000,
		});
		try {
			const a = await Api.login(own);
			const sub = (
				await create(a, { event: 'Events\\Users\\Updated', url: `http://127.0.0.1:${port}/slow` })
			).json;
			await own.control.simulateEvent('Events\\Users\\Updated', {});
			const [x] = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 1);
			expect(x.error).toMatch(/timed out/);
			expect(x.response_time_ms).toBeGreaterThanOrEqual(140);
		} finally {
			await own.close();
			slow.closeAllConnections();
			await new Promise((r) => slow.close(r));
		}
	});

	it('an entry redispatched twice while the first is in flight: each attempt row holds the delivery_id it sent', async () => {
		const { createServer } = await import('node:http');
		// answers after 300 ms, so the second redispatch is asked for while the first is in flight
		const slow = createServer((req, res) => {
			req.resume();
			setTimeout(() => res.writeHead(200).end('ok'), 300);
		});
		await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
		const port = (slow.address() as import('node:net').AddressInfo).port;
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			deliveryMaxAttempts: 1,
			rateLimitPerMinute: 10_000,
			deliveryLog: 'perDelivery',
			redispatchEntry: 'marks',
		});
		try {
			const a = await Api.login(own);
			const sub = (
				await create(a, { event: 'Events\\Users\\Updated', url: `http://127.0.0.1:${port}/s` })
			).json;
			await own.control.simulateEvent('Events\\Users\\Updated', {});
			const [first] = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 1);
			const logsUrl = `${a.r.webhook}/${sub.id}/logs`;
			for (let i = 0; i < 2; i++)
				expect((await a.send('POST', `${logsUrl}/${first.log_id}/redispatch`)).status).toBe(200);
			const rows = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 3);
			const redispatches = rows.filter((row) => row.id !== first.id);
			const sent = redispatches.map(
				(row) => (JSON.parse(row.body) as { delivery_id: string }).delivery_id,
			);
			expect(new Set(sent).size).toBe(2);
			expect(redispatches.map((row) => row.delivery_id)).toEqual(sent);
		} finally {
			await own.close();
			slow.closeAllConnections();
			await new Promise((r) => slow.close(r));
		}
	});

	it('deliveryLog perAttempt: one entry per attempt (tries = its number); a redispatch marks the entry asked for and logs its attempts as entries of their own', async () => {
		const flaky = await receiver({ status: (i) => (i === 1 || i === 3 ? 500 : 204) });
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			deliveryBackoffMs: 20,
			deliveryMaxAttempts: 2,
			rateLimitPerMinute: 10_000,
			deliveryLog: 'perAttempt',
		});
		try {
			const a = await Api.login(own);
			const sub = (await create(a, { event: 'Events\\Users\\Created', url: `${flaky.url}/x` }))
				.json;
			await own.control.simulateEvent('Events\\Users\\Created', { user: { id: 1 } });
			const first = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 2);
			const logsUrl = `${a.r.webhook}/${sub.id}/logs`;
			let logs = (await a.get(logsUrl)).json.data;
			// newest first: attempt 2 (answered 204), then attempt 1 (500)
			expect(
				logs.map((l: { tries: number; success: boolean; status_code: number }) => [
					l.tries,
					l.success,
					l.status_code,
				]),
			).toEqual([
				[2, true, 204],
				[1, false, 500],
			]);
			expect(new Set(first.map((x) => x.delivery_ref)).size).toBe(1);
			expect(new Set(first.map((x) => x.log_id)).size).toBe(2);

			const failed = logs[1];
			expect((await a.send('POST', `${logsUrl}/${failed.id}/redispatch`)).status).toBe(200);
			const all = await own.control.waitForDeliveries({ subscriptionId: sub.id }, 4);
			logs = (await a.get(logsUrl)).json.data;
			const marked = logs.find((l: { id: number }) => l.id === failed.id);
			expect(marked).toMatchObject({ redispatched: true, success: false, tries: 1 });
			expect(marked.delivery_id).not.toBe('');
			const redispatchEntries = logs.filter(
				(l: { id: number; delivery_id: string }) =>
					l.id !== failed.id && l.delivery_id === marked.delivery_id,
			);
			// the redispatch's attempt 1 got 500, its attempt 2 got 204
			expect(
				redispatchEntries.map((l: { tries: number; success: boolean; redispatched: boolean }) => [
					l.tries,
					l.success,
					l.redispatched,
				]),
			).toEqual([
				[2, true, true],
				[1, false, true],
			]);
			expect(new Set(all.map((x) => x.delivery_ref)).size).toBe(1);
			expect(logs).toHaveLength(4);
		} finally {
			await own.close();
			await flaky.close();
		}
	});

	it('the delivery log reading is switched through the control API; anything else is refused', async () => {
		await expect(sb.control.setConfig({ deliveryLog: 'perEvent' as never })).rejects.toThrow(
			/deliveryLog must be one of perDelivery, perAttempt/,
		);
		expect((await sb.control.setConfig({ deliveryLog: 'perAttempt' })).deliveryLog).toBe(
			'perAttempt',
		);
		expect((await sb.control.setConfig({ deliveryLog: 'perDelivery' })).deliveryLog).toBe(
			'perDelivery',
		);
	});
});
