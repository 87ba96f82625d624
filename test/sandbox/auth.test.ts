import { startSandbox, type SandboxHandle } from '../../sandbox';
import { Api, http, roots, uniqueUser } from './helpers';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await startSandbox({ rateLimitPerMinute: 1000 });
});
afterAll(() => sb.close());

const refreshUrl = (username: string | null, tenancy = sb.tenancyId) =>
	`${roots(sb, tenancy).report}/apikeys${username === null ? '' : `?username=${encodeURIComponent(username)}`}`;

describe('refresh (operation 1)', () => {
	it('exchanges the start refresh token of the default user for an API key grant', async () => {
		const res = await http('GET', refreshUrl(sb.username), { token: sb.refreshToken });
		expect(res.status).toBe(200);
		expect(res.headers['content-type']).toMatch(/^application\/json/);
		expect(res.json).toEqual({
			success: true,
			api_key: expect.any(String),
			expires_in: 86400,
			refresh_token: expect.any(String),
		});
		expect(res.json.refresh_token).not.toBe(res.json.api_key);
		const live = await sb.control.auth(sb.username);
		expect(live.api_key).toBe(res.json.api_key);
		expect(live.refresh_token).toBe(res.json.refresh_token);
		expect(sb.refreshToken).toBe(res.json.refresh_token);
		expect(Date.parse(live.api_key_expires_at!) - Date.now()).toBeGreaterThan(86_390_000);
	});

	it('rotates both values and kills the previous pair at once (single use)', async () => {
		const api = await Api.login(sb);
		const [oldKey, oldRefresh] = [api.apiKey, api.refreshToken];
		expect((await api.get(`${api.r.webhook}/events`)).status).toBe(200);
		await api.refresh();
		expect(api.apiKey).not.toBe(oldKey);
		expect(api.refreshToken).not.toBe(oldRefresh);
		// previous API key: dead
		const withOldKey = await http('GET', `${api.r.webhook}/events`, { token: oldKey });
		expect(withOldKey.status).toBe(401);
		expect(withOldKey.json).toEqual({ message: 'Unauthenticated.', error: 'invalid_api_key' });
		// previous refresh token: dead (single use), answered text/plain
		const again = await http('GET', refreshUrl(api.username), { token: oldRefresh });
		expect(again.status).toBe(401);
		expect(again.headers['content-type']).toMatch(/^text\/plain/);
		expect(again.text).toBe('Unauthorized');
		// the new pair works
		expect((await api.get(`${api.r.webhook}/events`)).status).toBe(200);
		const live = await sb.control.auth(api.username);
		expect(live).toMatchObject({
			exchanges: 2,
			failed_exchanges: 1,
			api_key: api.apiKey,
			refresh_token: api.refreshToken,
		});
	});

	it.each([
		['a different username', (u: string) => refreshUrl(`${u}-other`)],
		['a missing username', () => refreshUrl(null)],
		['another tenancy', (u: string) => refreshUrl(u, 'other-tenancy')],
	])('answers %s with 401 text/plain and invalidates nothing', async (_what, url) => {
		const api = await Api.login(sb);
		const res = await http('GET', url(api.username), { token: api.refreshToken });
		expect(res.status).toBe(401);
		expect(res.headers['content-type']).toMatch(/^text\/plain/);
		expect(res.text.length).toBeGreaterThan(0);
		// the most recently stored pair stays live
		expect((await api.get(`${api.r.webhook}/events`)).status).toBe(200);
		const ok = await http('GET', refreshUrl(api.username), { token: api.refreshToken });
		expect(ok.status).toBe(200);
	});

	it('rejects an API key or no token on the refresh endpoint, and a refresh token on other operations', async () => {
		const api = await Api.login(sb);
		expect((await http('GET', refreshUrl(api.username), { token: api.apiKey })).status).toBe(401);
		expect((await http('GET', refreshUrl(api.username))).status).toBe(401);
		const res = await http('GET', `${api.r.webhook}/events`, { token: api.refreshToken });
		expect(res.status).toBe(401);
		expect(res.json.error).toBe('invalid_api_key');
		expect((await sb.control.auth(api.username)).failed_exchanges).toBe(2);
	});

	it('a concurrent double refresh leaves exactly one winner', async () => {
		const api = await Api.login(sb);
		const both = await Promise.all(
			[1, 2].map(() => http('GET', refreshUrl(api.username), { token: api.refreshToken })),
		);
		expect(both.map((r) => r.status).sort()).toEqual([200, 401]);
	});

	it('operator re-issue kills the previous refresh token and API key', async () => {
		const api = await Api.login(sb);
		await sb.control.issueRefreshToken(api.username);
		expect((await api.get(`${api.r.webhook}/events`)).status).toBe(401);
		expect((await http('GET', refreshUrl(api.username), { token: api.refreshToken })).status).toBe(
			401,
		);
		expect((await sb.control.auth(api.username)).api_key).toBeNull();
	});
});

describe('API keys on other operations', () => {
	it('an expired key gets 401 JSON without rotating the refresh token; refreshing recovers', async () => {
		const api = await Api.login(sb);
		const before = await sb.control.auth(api.username);
		await sb.control.expireApiKey(api.username);
		const res = await api.get(`${api.r.webhook}/events`);
		expect(res.status).toBe(401);
		expect(res.headers['content-type']).toMatch(/^application\/json/);
		expect(res.json).toEqual({ message: 'Unauthenticated.', error: 'expired_api_key' });
		expect((await sb.control.auth(api.username)).refresh_token).toBe(before.refresh_token);
		await api.refresh();
		expect((await api.get(`${api.r.webhook}/events`)).status).toBe(200);
	});

	it('keys live 24 hours on the sandbox clock', async () => {
		const own = await startSandbox({ demoData: false, quiet: true });
		try {
			const api = await Api.login(own);
			await own.control.advanceClock(86_400_000 - 5_000);
			expect((await api.get(`${api.r.webhook}/events`)).status).toBe(200);
			await own.control.advanceClock(10_000);
			expect((await api.get(`${api.r.webhook}/events`)).json.error).toBe('expired_api_key');
		} finally {
			await own.close();
		}
	});

	it('unknown or missing keys get 401 JSON; a valid key on another tenancy gets 401', async () => {
		const api = await Api.login(sb);
		expect((await http('GET', `${api.r.webhook}/events`, { token: 'nope' })).json).toEqual({
			message: 'Unauthenticated.',
			error: 'invalid_api_key',
		});
		expect((await http('GET', `${api.r.webhook}/events`)).json.error).toBe('missing_api_key');
		const other = await http('GET', `${roots(sb, 'someone-else').webhook}/events`, {
			token: api.apiKey,
		});
		expect(other.status).toBe(401);
		expect(other.json.error).toBe('tenancy_mismatch');
	});
});

describe('User-Agent (Authentication 7)', () => {
	it('every spec path answers 403 without a User-Agent, even with valid credentials', async () => {
		const api = await Api.login(sb);
		const r = api.r;
		const calls: [string, string][] = [
			['GET', `${r.report}/apikeys?username=${api.username}`],
			['GET', `${r.report}/activitycompletions?userId=2`],
			['GET', `${r.report}/attendance`],
			['GET', `${r.report}/content`],
			['GET', `${r.report}/completions`],
			['POST', r.bookmark],
			['GET', `${r.webhook}/events`],
			['GET', r.webhook],
			['POST', r.webhook],
			['GET', `${r.webhook}/1`],
			['PATCH', `${r.webhook}/1`],
			['PUT', `${r.webhook}/1`],
			['DELETE', `${r.webhook}/1`],
			['GET', `${r.webhook}/1/logs`],
			['POST', `${r.webhook}/1/logs/1/redispatch`],
			['POST', `${r.webhook}/relay`],
		];
		for (const [method, url] of calls) {
			const token = url.includes('apikeys') ? api.refreshToken : api.apiKey;
			const res = await http(method, url, {
				token,
				ua: false,
				body: method === 'GET' || method === 'DELETE' ? undefined : {},
			});
			expect([method, url, res.status]).toEqual([method, url, 403]);
		}
		// nothing was consumed: the refresh token still works
		await api.refresh();
	});

	it('the control API needs no User-Agent', async () => {
		const res = await http('GET', `${sb.url}/__sandbox/stats`, { ua: false });
		expect(res.status).toBe(200);
	});
});

describe('request log and stats', () => {
	it('records kind and user of the credential, never its value', async () => {
		const username = uniqueUser('log');
		const api = await Api.login(sb, username);
		await api.get(`${api.r.webhook}/events`);
		await http('GET', `${api.r.webhook}/events`, { token: 'garbage' });
		const log = await sb.control.requests({ username });
		expect(log.map((e) => [e.path.split('/').pop(), e.authorization_kind, e.status])).toEqual([
			['apikeys', 'refresh', 200],
			['events', 'api_key', 200],
		]);
		expect(log[0].query).toEqual({ username });
		expect(log[0].user_agent).toBe('sandbox-contract-tests/1.0');
		expect(JSON.stringify(log)).not.toContain(api.apiKey);
		const all = await sb.control.requests({ path: '/webhooks/events' });
		expect(all.some((e) => e.authorization_kind === 'invalid' && e.status === 401)).toBe(true);
		const stats = await sb.control.stats();
		expect(stats.exchanges).toBeGreaterThan(0);
		expect(stats.by_status['401']).toBeGreaterThan(0);
		expect(stats.requests).toBeGreaterThanOrEqual(stats.by_status['200']);
	});
});
