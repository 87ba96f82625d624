import { startSandbox, type SandboxHandle } from '../../sandbox';
import { Api } from './helpers';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await startSandbox({ demoData: false, rateLimitPerMinute: 5 });
});
afterAll(() => sb.close());

describe('rate limit', () => {
	it('N per minute per API key with X-Ratelimit-Limit / X-RateLimit-Remaining, then 429 with Retry-After', async () => {
		const api = await Api.login(sb);
		const events = `${api.r.webhook}/events`;
		const remaining: string[] = [];
		for (let i = 0; i < 5; i++) {
			const res = await api.get(events);
			expect(res.status).toBe(200);
			expect(res.headers['x-ratelimit-limit']).toBe('5');
			remaining.push(res.headers['x-ratelimit-remaining']);
		}
		expect(remaining).toEqual(['4', '3', '2', '1', '0']);
		const over = await api.get(events);
		expect(over.status).toBe(429);
		expect(over.headers['x-ratelimit-limit']).toBe('5');
		expect(over.headers['x-ratelimit-remaining']).toBe('0');
		expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
		expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
		// the bucket belongs to the credential: a fresh key does not reset it
		await api.refresh();
		expect((await api.get(events)).status).toBe(429);
		// another API user has its own bucket
		const other = await Api.login(sb);
		expect((await other.get(events)).status).toBe(200);
		// the window slides on the sandbox clock
		await sb.control.advanceClock(61_000);
		const again = await api.get(events);
		expect(again.status).toBe(200);
		expect(again.headers['x-ratelimit-remaining']).toBe('4');
		expect((await sb.control.stats()).rate_limited).toBeGreaterThanOrEqual(2);
	});

	it('headers on every authenticated response (errors included); limit configurable at run time', async () => {
		const api = await Api.login(sb);
		await sb.control.setConfig({ rateLimitPerMinute: 60 });
		const notFound = await api.get(`${api.r.webhook}/12345`);
		expect(notFound.status).toBe(404);
		expect(notFound.headers['x-ratelimit-limit']).toBe('60');
		expect(notFound.headers['x-ratelimit-remaining']).toBe('59');
		const failed = await api.get(`${api.r.report}/completions`, { limit: 9999 });
		expect(failed.json.status).toBe('Failed');
		expect(failed.headers['x-ratelimit-remaining']).toBe('58');
		await sb.control.setConfig({ rateLimitPerMinute: 5 });
	});
});
