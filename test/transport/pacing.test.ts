/**
 * Client-side pacing against the sandbox's real sliding window (60 s of real time): a burst of
 * 200 requests from several simultaneous executions, with the server's limit lowered, finishes
 * without a failed item, without crawling, and (nearly) without a 429.
 */
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { executeNode } from '../support/n8n';
import { newCredential, outputOf, probe, type ProbePlan } from './helpers';

let sb: SandboxHandle;

beforeAll(async () => {
	sb = await startSandbox({ quiet: true, demoData: false, rateLimitPerMinute: 6000 });
});

afterAll(async () => {
	await sb.close();
});

test('a burst of 200 requests (4 executions x 50 concurrent) at a lowered limit of 100/min: zero failed items', async () => {
	const { store, username } = await newCredential(sb, 'pace');
	await sb.control.setConfig({ rateLimitPerMinute: 100 });
	const plan: ProbePlan = {
		concurrent: true,
		calls: Array.from({ length: 50 }, () => ({
			method: 'GET' as const,
			root: 'webhook' as const,
			path: '/events',
		})),
	};
	const started = Date.now();
	const runs = await Promise.all(
		Array.from(
			{ length: 4 },
			async () => await executeNode({ nodeType: probe(plan), credentials: store }),
		),
	);
	const elapsed = Date.now() - started;

	const results = runs.flatMap((r) => outputOf(r));
	expect(results).toHaveLength(200);
	const failed = results.filter((r) => !r.ok);
	expect(failed.map((r) => r.error?.message)).toEqual([]);

	const requests = (await sb.control.requests({ username })).filter((r) =>
		r.path.endsWith('/events'),
	);
	const rateLimited = requests.filter((r) => r.status === 429).length;
	expect(requests.filter((r) => r.status === 200)).toHaveLength(200);
	// paced client-side on the server's own window: not a single 429
	expect(rateLimited).toBe(0);
	// 100 at once, the next 100 when the first leave the window: one minute, not 200 x 600 ms
	expect(elapsed).toBeGreaterThanOrEqual(59_000);
	expect(elapsed).toBeLessThan(75_000);
}, 150_000);
