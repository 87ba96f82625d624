// The sandbox's readings of what the spec leaves open, each behind a config switch
// (sandbox/README.md): the delivery log's order, what a redispatch does to the entry it is asked
// for and what it sends, and the statuses after which a delivery is not retried. Each is checked
// by what a client sees: the log (operation 13), the bodies sent (control API /deliveries).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startSandbox, type SandboxConfig, type SandboxHandle } from '../../sandbox';
import { SandboxControlError } from '../../sandbox/client';
import { Api, http, receiver, waitFor } from './helpers';

jest.setTimeout(30_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LogEntry {
	id: number;
	event_type: string;
	delivery_id: string;
	success: boolean;
	tries: number;
	status_code: number | null;
	response: string;
	response_time_ms: number | null;
	redispatched: boolean;
	created_at: string;
	updated_at: string;
}

let sb: SandboxHandle;
let initial: SandboxConfig;
beforeAll(async () => {
	sb = await startSandbox({
		allowHttpWebhookUrls: true,
		rateLimitPerMinute: 100_000,
		deliveryBackoffMs: 10,
		deliveryMaxAttempts: 2,
		demoData: false,
	});
	initial = await sb.control.getConfig();
});
afterAll(() => sb.close());
// every test sets the readings it needs; none leaks into the next
afterEach(async () => {
	await waitFor(async () => (await sb.control.pendingDeliveries()).pending === 0, 10_000);
	await sb.control.setConfig(initial);
});

async function subscribe(event: string, url: string): Promise<{ api: Api; id: number }> {
	const api = await Api.login(sb);
	const res = await api.send('POST', api.r.webhook, { event, url });
	expect(res.status).toBe(201);
	return { api, id: res.json.id };
}

const logsOf = async (api: Api, id: number, query: Record<string, number> = {}) =>
	(await api.get(`${api.r.webhook}/${id}/logs`, { perPage: 100, ...query })).json;

/** Waits until `n` attempts to the subscription were made and nothing is pending. */
const settled = (subscriptionId: number, n: number) =>
	waitFor(
		async () => {
			const attempts = await sb.control.deliveries({ subscriptionId });
			const idle = (await sb.control.pendingDeliveries()).pending === 0;
			return idle && attempts.length >= n && attempts;
		},
		10_000,
		`${n} attempts to subscription ${subscriptionId}`,
	);

describe('config switches', () => {
	it('are shown with their defaults; a value outside the readings is refused naming the key and the allowed values', async () => {
		const own = await startSandbox({ demoData: false });
		try {
			expect(await own.control.getConfig()).toMatchObject({
				deliveryLog: 'perDelivery',
				logOrder: 'newestFirst',
				redispatchEntry: 'marks',
				redispatchPayload: 'original',
				deliveryNoRetryStatuses: [],
			});
		} finally {
			await own.close();
		}
		const refused = async (patch: Record<string, unknown>) => {
			const error = await sb.control
				.setConfig(patch as Partial<SandboxConfig>)
				.then(() => undefined)
				.catch((e: unknown) => e);
			expect(error).toBeInstanceOf(SandboxControlError);
			expect((error as SandboxControlError).status).toBe(400);
			return ((error as SandboxControlError).body as { error: string }).error;
		};
		expect(await refused({ logOrder: 'byDate' })).toBe(
			'logOrder must be one of newestFirst, oldestFirst',
		);
		expect(await refused({ redispatchEntry: 'replace' })).toBe(
			'redispatchEntry must be one of marks, flagOnly, untouched',
		);
		expect(await refused({ redispatchPayload: 'latest' })).toBe(
			'redispatchPayload must be one of original, current',
		);
		expect(await refused({ deliveryLog: 1 })).toBe(
			'deliveryLog must be one of perDelivery, perAttempt',
		);
		for (const bad of [404, '404', [99], [600], [404.5], ['404'], [404, null]])
			expect(await refused({ deliveryNoRetryStatuses: bad })).toBe(
				'deliveryNoRetryStatuses must be an array of HTTP status codes (integers 100-599), e.g. [404, 410]',
			);
		expect(await refused({ deliveryBackoffMs: 2_147_483_648 })).toBe(
			'deliveryBackoffMs must be at most 2147483647 (about 24.8 days)',
		);
		// nothing refused was applied
		expect(await sb.control.getConfig()).toEqual(initial);

		expect(
			await sb.control.setConfig({
				logOrder: 'oldestFirst',
				redispatchEntry: 'untouched',
				redispatchPayload: 'current',
				deliveryNoRetryStatuses: [410, 404, 410],
				deliveryBackoffMs: 3_600_000,
			}),
		).toEqual({
			...initial,
			logOrder: 'oldestFirst',
			redispatchEntry: 'untouched',
			redispatchPayload: 'current',
			deliveryNoRetryStatuses: [410, 404],
			deliveryBackoffMs: 3_600_000,
		});
		expect((await sb.control.getConfig()).redispatchEntry).toBe('untouched');
		expect(
			(await sb.control.setConfig({ deliveryNoRetryStatuses: [] })).deliveryNoRetryStatuses,
		).toEqual([]);
	});

	it('start options are checked the same way', async () => {
		await expect(startSandbox({ logOrder: 'sideways' as never, demoData: false })).rejects.toThrow(
			'logOrder must be one of newestFirst, oldestFirst',
		);
		await expect(
			startSandbox({ deliveryNoRetryStatuses: [1000], demoData: false }),
		).rejects.toThrow(/deliveryNoRetryStatuses must be an array of HTTP status codes/);
		const own = await startSandbox({
			demoData: false,
			logOrder: 'oldestFirst',
			redispatchEntry: 'flagOnly',
			redispatchPayload: 'current',
			deliveryNoRetryStatuses: [404, 410],
			deliveryBackoffMs: 120_000,
		});
		try {
			expect(await own.control.getConfig()).toMatchObject({
				logOrder: 'oldestFirst',
				redispatchEntry: 'flagOnly',
				redispatchPayload: 'current',
				deliveryNoRetryStatuses: [404, 410],
				deliveryBackoffMs: 120_000,
			});
			// POST /reset goes back to the start options
			await own.control.setConfig({ logOrder: 'newestFirst', deliveryNoRetryStatuses: [] });
			await own.control.reset();
			expect(await own.control.getConfig()).toMatchObject({
				logOrder: 'oldestFirst',
				deliveryNoRetryStatuses: [404, 410],
			});
		} finally {
			await own.close();
		}
	});

	it('the command line takes the flags and environment variables (a flag wins over its variable)', async () => {
		const run = (args: string[], env: Record<string, string>) => {
			const child = spawn(
				process.execPath,
				['--import', 'tsx', 'sandbox/cli.ts', '--port', '0', '--quiet', '--no-demo', ...args],
				{
					cwd: join(__dirname, '..', '..'),
					env: { ...process.env, ...env },
					stdio: ['ignore', 'pipe', 'pipe'],
				},
			);
			let out = '';
			child.stdout.on('data', (d: Buffer) => (out += d.toString()));
			child.stderr.on('data', (d: Buffer) => (out += d.toString()));
			const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
			return { child, exited, out: () => out };
		};
		const ok = run(
			[
				'--log-order',
				'oldestFirst',
				'--redispatch-entry',
				'flagOnly',
				'--no-retry-statuses',
				'404,410',
			],
			{
				LP_LOG_ORDER: 'newestFirst',
				LP_REDISPATCH_PAYLOAD: 'current',
				LP_DELIVERY_LOG: 'perAttempt',
				LP_NO_RETRY_STATUSES: '500',
			},
		);
		try {
			const line = await waitFor(
				async () => /SANDBOX_READY (.+)\n/.exec(ok.out()) ?? undefined,
				20_000,
				() => `a SANDBOX_READY line: ${ok.out()}`,
				50,
			);
			const ready = JSON.parse(line[1]) as { control: string };
			expect((await http('GET', `${ready.control}/config`)).json).toMatchObject({
				logOrder: 'oldestFirst',
				redispatchEntry: 'flagOnly',
				redispatchPayload: 'current',
				deliveryLog: 'perAttempt',
				deliveryNoRetryStatuses: [404, 410],
			});
		} finally {
			ok.child.kill('SIGTERM');
		}
		expect(await ok.exited).toBe(0);

		const bad = run(['--redispatch-entry', 'replace'], {});
		expect(await bad.exited).toBe(1);
		expect(bad.out()).toContain(
			'--redispatch-entry needs one of marks, flagOnly, untouched, got replace',
		);
		const badEnv = run([], { LP_NO_RETRY_STATUSES: '404,abc' });
		expect(await badEnv.exited).toBe(1);
		expect(badEnv.out()).toContain(
			'LP_NO_RETRY_STATUSES needs comma-separated HTTP status codes (100-599), got 404,abc',
		);
	});
});

describe('logOrder: the order of the delivery log (operation 13)', () => {
	it('newestFirst lists descending ids, oldestFirst ascending ids, and paging keeps the order', async () => {
		const rx = await receiver();
		try {
			const { api, id } = await subscribe('Events\\Users\\Created', `${rx.url}/order`);
			for (let i = 1; i <= 3; i++)
				await sb.control.simulateEvent('Events\\Users\\Created', { user: { id: i } });
			const attempts = await settled(id, 3);
			const ids = [...new Set(attempts.map((a) => a.log_id!))].sort((x, y) => x - y);
			expect(ids).toHaveLength(3);
			const [first, second, third] = ids;
			const page = async (n: number) => {
				const res = await logsOf(api, id, { perPage: 2, page: n });
				expect(res.meta).toMatchObject({ current_page: n, per_page: 2, total: 3, last_page: 2 });
				return res.data.map((l: LogEntry) => l.id);
			};

			expect((await sb.control.getConfig()).logOrder).toBe('newestFirst');
			expect(await page(1)).toEqual([third, second]);
			expect(await page(2)).toEqual([first]);

			await sb.control.setConfig({ logOrder: 'oldestFirst' });
			expect(await page(1)).toEqual([first, second]);
			expect(await page(2)).toEqual([third]);
			expect((await logsOf(api, id)).data.map((l: LogEntry) => l.id)).toEqual([
				first,
				second,
				third,
			]);
		} finally {
			await rx.close();
		}
	});
});

/**
 * The receiver fails the first three requests and answers 200 after that: the delivery fails both
 * its attempts (deliveryMaxAttempts 2), the redispatch's first attempt fails and its second
 * succeeds.
 */
describe.each(['perDelivery', 'perAttempt'] as const)(
	'redispatchEntry under deliveryLog %s: a failed delivery redispatched to a receiver that recovers',
	(deliveryLog) => {
		async function scenario(redispatchEntry: SandboxConfig['redispatchEntry']) {
			await sb.control.setConfig({ deliveryLog, redispatchEntry });
			const rx = await receiver({ status: (i) => (i <= 3 ? 500 : 200), reply: 'fine' });
			try {
				const { api, id } = await subscribe('Events\\Users\\Created', `${rx.url}/redispatch`);
				await sb.control.simulateEvent('Events\\Users\\Created', { user: { id: 77 } });
				await settled(id, 2);
				const before: LogEntry[] = (await logsOf(api, id)).data;
				// the entry asked for: the delivery's only entry, or its last attempt's
				const asked = before[0];
				expect(asked).toMatchObject({
					delivery_id: '',
					success: false,
					tries: 2,
					status_code: 500,
					redispatched: false,
				});
				// a later second, so that a new updated_at shows
				await sb.control.advanceClock(5_000);
				const rd = await api.send('POST', `${api.r.webhook}/${id}/logs/${asked.id}/redispatch`);
				expect(rd.json).toEqual({
					data: {
						success: true,
						message: 'Webhook queued for redispatch.',
						event: 'Events\\Users\\Created',
					},
				});
				const attempts = await settled(id, 4);
				const after: LogEntry[] = (await logsOf(api, id)).data;
				const redispatchBodies = rx.received.slice(2).map((r) => JSON.parse(r.raw.toString()));
				expect(redispatchBodies).toHaveLength(2);
				const deliveryId: string = redispatchBodies[0].delivery_id;
				expect(deliveryId).toMatch(UUID);
				expect(redispatchBodies[1].delivery_id).toBe(deliveryId);
				expect(redispatchBodies.map((b) => b.payload)).toEqual([
					{ user: { id: 77 } },
					{ user: { id: 77 } },
				]);
				// all attempts, the redispatch's too, belong to one delivery in the control API
				expect(new Set(attempts.map((a) => a.delivery_ref)).size).toBe(1);
				return { before, asked, after, deliveryId, attempts };
			} finally {
				await rx.close();
			}
		}

		const newEntries = (after: LogEntry[], before: LogEntry[]) =>
			after.filter((l) => !before.some((b) => b.id === l.id));
		const outcome = (l: LogEntry) => [l.tries, l.success, l.status_code, l.response];

		it('flagOnly: the entry asked for gets redispatched: true and a new updated_at only; the redispatch is logged as new entries', async () => {
			const { before, asked, after, deliveryId, attempts } = await scenario('flagOnly');
			const now = after.find((l) => l.id === asked.id)!;
			expect(now).toEqual({ ...asked, redispatched: true, updated_at: now.updated_at });
			expect(Date.parse(now.updated_at) - Date.parse(asked.updated_at)).toBeGreaterThanOrEqual(
				5_000,
			);
			// the other entries of the first delivery (perAttempt: its first attempt) are unchanged
			for (const b of before.filter((l) => l.id !== asked.id))
				expect(after.find((l) => l.id === b.id)).toEqual(b);
			const added = newEntries(after, before);
			for (const l of added)
				expect(l).toMatchObject({
					event_type: 'Events\\Users\\Created',
					delivery_id: deliveryId,
					redispatched: true,
				});
			if (deliveryLog === 'perDelivery') {
				expect(added.map(outcome)).toEqual([[2, true, 200, 'fine']]);
				expect(after).toHaveLength(2);
			} else {
				// newest first: the redispatch's attempt 2, then its attempt 1
				expect(added.map(outcome)).toEqual([
					[2, true, 200, 'fine'],
					[1, false, 500, 'fine'],
				]);
				expect(after).toHaveLength(4);
			}
			// the control API's rows of the redispatch point at the new entries
			expect(
				attempts.slice(2).map((a) => [a.attempt, a.log_id, a.delivery_id, a.status_code]),
			).toEqual(
				deliveryLog === 'perDelivery'
					? [
							[1, added[0].id, deliveryId, 500],
							[2, added[0].id, deliveryId, 200],
						]
					: [
							[1, added[1].id, deliveryId, 500],
							[2, added[0].id, deliveryId, 200],
						],
			);
		});

		it('untouched: the entry asked for does not change at all; the redispatch is logged as new entries', async () => {
			const { before, after, deliveryId } = await scenario('untouched');
			for (const b of before) expect(after.find((l) => l.id === b.id)).toEqual(b);
			const added = newEntries(after, before);
			for (const l of added)
				expect(l).toMatchObject({ delivery_id: deliveryId, redispatched: true });
			expect(added.map(outcome)).toEqual(
				deliveryLog === 'perDelivery'
					? [[2, true, 200, 'fine']]
					: [
							[2, true, 200, 'fine'],
							[1, false, 500, 'fine'],
						],
			);
			expect(after).toHaveLength(deliveryLog === 'perDelivery' ? 2 : 4);
		});

		it('marks (default): the entry asked for gets redispatched: true and the new delivery_id', async () => {
			const { before, asked, after, deliveryId } = await scenario('marks');
			const now = after.find((l) => l.id === asked.id)!;
			const added = newEntries(after, before);
			if (deliveryLog === 'perDelivery') {
				// the same entry records the new attempts
				expect(now).toEqual({
					...asked,
					delivery_id: deliveryId,
					redispatched: true,
					tries: 4,
					success: true,
					status_code: 200,
					response: 'fine',
					response_time_ms: now.response_time_ms,
					updated_at: now.updated_at,
				});
				expect(added).toEqual([]);
			} else {
				// it keeps its own outcome; each new attempt is an entry of its own
				expect(now).toEqual({
					...asked,
					delivery_id: deliveryId,
					redispatched: true,
					updated_at: now.updated_at,
				});
				expect(added.map((l) => [...outcome(l), l.delivery_id, l.redispatched])).toEqual([
					[2, true, 200, 'fine', deliveryId, true],
					[1, false, 500, 'fine', deliveryId, true],
				]);
			}
		});
	},
);

describe('redispatchPayload: what a redispatch sends', () => {
	let nextUser = 0;
	async function scenario(redispatchPayload: SandboxConfig['redispatchPayload']) {
		await sb.control.setConfig({ redispatchPayload, deliveryMaxAttempts: 1 });
		const demo = await sb.control.demo();
		const learner = demo.users.filter((u) => !u.deleted && !u.suspended)[nextUser++];
		const course = demo.content.find((c) => c.contenttype === 'Course' && !c.deleted)!;
		const rx = await receiver({ status: (i) => (i === 1 ? 500 : 200) });
		try {
			const { api, id } = await subscribe('Events\\Courses\\Completion_created', `${rx.url}/p`);
			const { completion } = await sb.control.simulateCompletion({
				userId: learner.id,
				contentId: course.id,
			});
			const [first] = await settled(id, 1);
			const sent = JSON.parse(first.body);
			expect(sent.payload.completion.id).toBe(completion.completionid);
			const email = `${learner.username}.moved-${redispatchPayload}@example.org`;
			const { user } = await sb.control.simulateUserUpdate(learner.id, {
				email,
				firstname: 'Renamed',
			});
			expect(user).toMatchObject({ id: learner.id, email, firstname: 'Renamed' });
			expect(user.email).not.toBe(sent.payload.completion.user.email);
			const [entry] = (await logsOf(api, id)).data as LogEntry[];
			await api.send('POST', `${api.r.webhook}/${id}/logs/${entry.id}/redispatch`);
			const [, again] = await settled(id, 2);
			return { sent, resent: JSON.parse(again.body), email, received: rx.received };
		} finally {
			await rx.close();
		}
	}

	it('original (default): the logged payload again, with the old email and name', async () => {
		const { sent, resent } = await scenario('original');
		expect(resent.payload).toEqual(sent.payload);
		expect(resent.delivery_id).toMatch(UUID);
	});

	it('current: the payload rendered again from the record, with the new email and name', async () => {
		const { sent, resent, email, received } = await scenario('current');
		const c = sent.payload.completion;
		expect(resent.payload).toEqual({
			completion: { ...c, user: { ...c.user, email, firstname: 'Renamed' } },
		});
		// what the receiver got is what the control API recorded
		expect(JSON.parse(received[1].raw.toString()).payload.completion.user.email).toBe(email);
	});

	it('current: an entry without a completion record re-sends the original payload', async () => {
		await sb.control.setConfig({ redispatchPayload: 'current', deliveryMaxAttempts: 1 });
		const rx = await receiver();
		try {
			const { api, id } = await subscribe('Events\\Users\\Created', `${rx.url}/synthetic`);
			const payload = { user: { id: 4242, email: 'synthetic@example.com' } };
			await sb.control.simulateEvent('Events\\Users\\Created', payload);
			await settled(id, 1);
			const [entry] = (await logsOf(api, id)).data as LogEntry[];
			await api.send('POST', `${api.r.webhook}/${id}/logs/${entry.id}/redispatch`);
			const [, again] = await settled(id, 2);
			expect(JSON.parse(again.body).payload).toEqual(payload);
		} finally {
			await rx.close();
		}
	});

	it('the learner update itself fires Users\\Updated and checks its input', async () => {
		const rx = await receiver();
		try {
			const { id } = await subscribe('Events\\Users\\*', `${rx.url}/users`);
			const demo = await sb.control.demo();
			const learner = demo.users.filter((u) => !u.deleted && !u.suspended).at(-1)!;
			await sb.control.simulateUserUpdate(learner.id, { lastname: 'Newname' });
			const [attempt] = await settled(id, 1);
			expect(JSON.parse(attempt.body)).toMatchObject({
				event: 'Events\\Users\\Updated',
				payload: { user: { id: learner.id, username: learner.username, lastname: 'Newname' } },
			});
			for (const [body, status] of [
				[{ userId: learner.id }, 400],
				[{ userId: learner.id, email: 'no-at-sign' }, 400],
				[{ userId: learner.id, firstname: '' }, 400],
				[{ userId: learner.id, firstname: 7 }, 400],
				[{ userId: 999_999, email: 'a@b.c' }, 404],
			] as const)
				expect(
					(await http('POST', `${sb.url}/__sandbox/simulate/user-update`, { body })).status,
				).toBe(status);
		} finally {
			await rx.close();
		}
	});
});

describe('deliveryNoRetryStatuses: the statuses after which a delivery is not retried', () => {
	it('[404]: a 404 gets exactly one attempt, a 500 is still retried up to deliveryMaxAttempts', async () => {
		const gone = await receiver({ status: () => 404 });
		const broken = await receiver({ status: () => 500 });
		try {
			await sb.control.setConfig({ deliveryMaxAttempts: 3, deliveryNoRetryStatuses: [404] });
			const g = await subscribe('Events\\Quiz\\Attempt_completed', `${gone.url}/gone`);
			const b = await subscribe('Events\\Quiz\\Attempt_completed', `${broken.url}/broken`);
			await sb.control.simulateEvent('Events\\Quiz\\Attempt_completed', { attempt: { id: 1 } });
			const brokenAttempts = await settled(b.id, 3);
			const goneAttempts = await settled(g.id, 1);
			expect(brokenAttempts.map((a) => [a.attempt, a.status_code])).toEqual([
				[1, 500],
				[2, 500],
				[3, 500],
			]);
			expect(goneAttempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 404]]);
			expect(gone.received).toHaveLength(1);
			expect((await logsOf(g.api, g.id)).data).toEqual([
				expect.objectContaining({ success: false, tries: 1, status_code: 404 }),
			]);

			// the default, no such statuses: the 404 is retried like any failure
			await sb.control.setConfig({ deliveryNoRetryStatuses: [] });
			await sb.control.simulateEvent('Events\\Quiz\\Attempt_completed', { attempt: { id: 2 } });
			const retried = (await settled(g.id, 4)).slice(1);
			expect(retried.map((a) => [a.attempt, a.status_code])).toEqual([
				[1, 404],
				[2, 404],
				[3, 404],
			]);
		} finally {
			await gone.close();
			await broken.close();
		}
	});

	it('a long back-off (120,000 ms) is accepted: the retry waits, scheduled', async () => {
		const own = await startSandbox({
			allowHttpWebhookUrls: true,
			rateLimitPerMinute: 100_000,
			demoData: false,
		});
		const broken = await receiver({ status: () => 503 });
		try {
			expect((await own.control.setConfig({ deliveryBackoffMs: 120_000 })).deliveryBackoffMs).toBe(
				120_000,
			);
			const api = await Api.login(own);
			const sub = (
				await api.send('POST', api.r.webhook, { event: '*', url: `${broken.url}/slow-retry` })
			).json;
			await own.control.simulateEvent('Events\\Users\\Created', {});
			await own.control.waitForDeliveries({ subscriptionId: sub.id }, 1);
			await new Promise((r) => setTimeout(r, 300));
			expect(broken.received).toHaveLength(1);
			expect((await own.control.pendingDeliveries()).pending).toBe(1);
		} finally {
			await own.close();
			await broken.close();
		}
	});
});
