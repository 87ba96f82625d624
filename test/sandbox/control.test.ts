import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../sandbox';
import { Api, http, roots, useSandbox, waitFor } from './helpers';

jest.setTimeout(30_000);

const ctx = useSandbox();
afterEach(() => ctx.sb.control.clearFaults());

describe('faults', () => {
	it('http500 for exactly the next N matching requests, then normal again', async () => {
		await ctx.sb.control.setFaults({ kind: 'http500', count: 2, pathPattern: '/completions$' });
		const feed = `${ctx.api.r.report}/completions`;
		expect((await ctx.api.get(`${ctx.api.r.webhook}/events`)).status).toBe(200); // other path: not matched
		expect((await ctx.api.get(feed)).status).toBe(500);
		expect((await ctx.api.get(feed)).status).toBe(500);
		expect((await ctx.api.get(feed)).status).toBe(200);
		expect((await ctx.sb.control.getFaults()).faults).toEqual([]);
	});

	it('drop closes the connection without an answer; method filter applies', async () => {
		await ctx.sb.control.setFaults({
			kind: 'drop',
			count: 1,
			method: 'GET',
			pathPattern: '/webhooks/events',
		});
		await expect(ctx.api.get(`${ctx.api.r.webhook}/events`)).rejects.toThrow();
		expect((await ctx.api.get(`${ctx.api.r.webhook}/events`)).status).toBe(200);
	});

	it('http429 bursts carry Retry-After; delays delay; rate 0 never fires', async () => {
		await ctx.sb.control.setFaults([
			{ kind: 'delay', delayMs: 150, count: 1 },
			{ kind: 'http429', count: 1 },
			{ kind: 'http500', rate: 0 },
		]);
		const t = Date.now();
		const res = await ctx.api.get(`${ctx.api.r.webhook}/events`);
		expect(Date.now() - t).toBeGreaterThanOrEqual(140);
		expect(res.status).toBe(429);
		expect(res.headers['retry-after']).toBe('1');
		for (let i = 0; i < 5; i++)
			expect((await ctx.api.get(`${ctx.api.r.webhook}/events`)).status).toBe(200);
	});

	it('a rate between 0 and 1 hits roughly that share', async () => {
		await ctx.sb.control.setFaults({ kind: 'http500', rate: 0.5, pathPattern: 'events' });
		const statuses = await Promise.all(
			Array.from({ length: 60 }, () =>
				ctx.api.get(`${ctx.api.r.webhook}/events`).then((r) => r.status),
			),
		);
		const fails = statuses.filter((s) => s === 500).length;
		expect(fails).toBeGreaterThan(10);
		expect(fails).toBeLessThan(50);
	});

	it('never applies to /__sandbox; invalid specs are 400', async () => {
		await ctx.sb.control.setFaults({ kind: 'http500' });
		expect((await http('GET', `${ctx.sb.url}/__sandbox/stats`)).status).toBe(200);
		expect((await ctx.api.get(`${ctx.api.r.webhook}/events`)).status).toBe(500);
		await ctx.sb.control.clearFaults();
		expect(
			(await http('PUT', `${ctx.sb.url}/__sandbox/faults`, { body: { kind: 'explode' } })).status,
		).toBe(400);
		expect(
			(await http('PUT', `${ctx.sb.url}/__sandbox/faults`, { body: { kind: 'http500', rate: 2 } }))
				.status,
		).toBe(400);
	});
});

describe('config, clock, generate, reset', () => {
	it('GET/PATCH config validates keys and types', async () => {
		const cfg = await ctx.sb.control.getConfig();
		expect(cfg).toMatchObject({
			rateLimitPerMinute: 100_000,
			reportReadyAfterPolls: 2,
			feedVisibilityDelayMs: 0,
			deliveryMaxAttempts: 3,
		});
		expect((await ctx.sb.control.setConfig({ deliveryBackoffMs: 50 })).deliveryBackoffMs).toBe(50);
		expect(
			(await http('PATCH', `${ctx.sb.url}/__sandbox/config`, { body: { nope: 1 } })).status,
		).toBe(400);
		expect(
			(await http('PATCH', `${ctx.sb.url}/__sandbox/config`, { body: { rateLimitPerMinute: 'x' } }))
				.status,
		).toBe(400);
	});

	it('the clock moves forward on request', async () => {
		const a = await ctx.sb.control.getClock();
		const b = await ctx.sb.control.advanceClock(3_600_000);
		expect(b.now - a.now).toBeGreaterThanOrEqual(3_600_000);
		expect(b.now - a.now).toBeLessThan(3_605_000);
	});

	// How fast is the bench's business (`npm run bench`); here only that it works, on a busy machine too.
	it('generates 100,000 feed records, all walkable', async () => {
		const own = await startSandbox({
			demoData: { users: 50, completions: 0 },
			rateLimitPerMinute: 100_000,
		});
		try {
			expect(await own.control.generateFeed(100_000)).toEqual({ total: 100_000 });
			const a = await Api.login(own);
			const res = await a.get(`${a.r.report}/completions`, { limit: 500, contentType: 'video' });
			expect(res.json.data.length).toBe(500);
			expect((await own.control.generateFeed(10, 'resource')).total).toBe(100_010);
			const w = await a.walk({ limit: 500, showSuspended: true });
			expect(w.records.length).toBe(100_010);
			expect(new Set(w.records.map((r) => r.completionid)).size).toBe(100_010);
		} finally {
			await own.close();
		}
	}, 300_000);

	it('reset returns to the seeded demo state with new tokens', async () => {
		const own = await startSandbox({ rateLimitPerMinute: 100_000 });
		try {
			const before = await own.control.demo();
			const oldToken = own.refreshToken;
			const a = await Api.login(own);
			await a.send('POST', a.r.webhook, { event: '*', url: 'https://x.example.com' });
			await own.control.simulateUserDeletion(before.users[0].id);
			const grant = await own.control.reset();
			expect(grant).toEqual({
				username: 'n8n-integration',
				tenancy_id: 'acme-learning',
				base_url: own.url,
				refresh_token: expect.any(String),
			});
			expect(grant.refresh_token).not.toBe(oldToken);
			expect(own.refreshToken).toBe(grant.refresh_token);
			expect(await own.control.demo()).toEqual(before);
			expect(await own.control.subscriptions()).toEqual([]);
			expect((await a.get(`${a.r.webhook}/events`)).status).toBe(401);
		} finally {
			await own.close();
		}
	});

	it('demo data is deterministic across starts', async () => {
		const other = await startSandbox({ quiet: true });
		try {
			const o = await Api.login(other);
			const mine = (
				await ctx.api.get(`${ctx.api.r.report}/completions`, {
					limit: 100,
					updatedSince: '2024-01-01T00:00:00Z',
				})
			).json.data;
			const theirs = (
				await o.get(`${o.r.report}/completions`, {
					limit: 100,
					updatedSince: '2024-01-01T00:00:00Z',
				})
			).json.data;
			expect(theirs).toEqual(mine);
		} finally {
			await other.close();
		}
	});
});

describe('state file', () => {
	it('a restart keeps the live tokens, subscriptions and feed', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
		const stateFile = join(dir, 'state.json');
		try {
			const first = await startSandbox({ stateFile, rateLimitPerMinute: 10_000 });
			const a = await Api.login(first, 'persisted-user');
			const sub = (
				await a.send('POST', a.r.webhook, {
					event: '*',
					url: 'https://keep.example.com',
					signing_key: 'keepme',
				})
			).json;
			const { completion } = await first.control.simulateCompletion();
			const defaultToken = first.refreshToken;
			await first.close();

			const second = await startSandbox({ stateFile, rateLimitPerMinute: 10_000 });
			try {
				expect(second.refreshToken).toBe(defaultToken);
				const b = new Api(second, 'persisted-user');
				b.apiKey = a.apiKey;
				b.refreshToken = a.refreshToken;
				expect((await b.get(`${b.r.webhook}/${sub.id}`)).json).toMatchObject({
					id: sub.id,
					url: 'https://keep.example.com',
				});
				await b.refresh(); // the stored refresh token still works after the restart
				expect(
					(
						await http('GET', `${b.r.report}/apikeys?username=n8n-integration`, {
							token: defaultToken,
						})
					).status,
				).toBe(200);
				expect((await second.control.completion(completion.completionid)).completion).toEqual(
					completion,
				);
			} finally {
				await second.close();
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('command line', () => {
	it('prints base URL, tenancy, username, a live refresh token and SANDBOX_READY; exits cleanly on SIGTERM', async () => {
		// tsx's loader inside this node process, not tsx's CLI: the CLI is a wrapper that relays the
		// signal and exits 143 itself when the program is slow to confirm, so its exit code would
		// not be the sandbox's
		const child = spawn(
			process.execPath,
			['--import', 'tsx', 'sandbox/cli.ts', '--port', '0', '--quiet', '--rate-limit', '7'],
			{
				cwd: join(__dirname, '..', '..'),
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		let out = '';
		child.stdout.on('data', (d: Buffer) => (out += d.toString()));
		child.stderr.on('data', (d: Buffer) => (out += d.toString()));
		const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
		try {
			const line = await waitFor(
				async () => /SANDBOX_READY (.+)\n/.exec(out) ?? undefined,
				20_000,
				() => `a SANDBOX_READY line: ${out}`,
				50,
			);
			const ready = JSON.parse(line[1]);
			expect(ready).toMatchObject({
				url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
				tenancyId: 'acme-learning',
				username: 'n8n-integration',
				refreshToken: expect.any(String),
			});
			expect(out).toContain(ready.refreshToken);
			expect(out).toContain('/__sandbox');
			const res = await http('GET', `${roots(ready).report}/apikeys?username=n8n-integration`, {
				token: ready.refreshToken,
			});
			expect(res.status).toBe(200);
			expect(res.headers['x-ratelimit-limit']).toBe('7');
		} finally {
			child.kill('SIGTERM');
		}
		expect(await exited).toBe(0);
	});
});
