/**
 * Client-side pacing against the sandbox's real sliding window (60 s of real time): a burst of
 * 200 requests from several simultaneous executions, with the server's limit lowered, finishes
 * without a failed item, without crawling (judged from the sandbox's arrival times), and without
 * a 429.
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
	const runs = await Promise.all(
		Array.from(
			{ length: 4 },
			async () => await executeNode({ nodeType: probe(plan), credentials: store }),
		),
	);

	const results = runs.flatMap((r) => outputOf(r));
	expect(results).toHaveLength(200);
	const failed = results.filter((r) => !r.ok);
	expect(failed.map((r) => r.error?.message)).toEqual([]);

	const requests = (await sb.control.requests({ username })).filter((r) =>
		r.path.endsWith('/events'),
	);
	const rateLimited = requests.filter((r) => r.status === 429).length;
	const answered = requests.filter((r) => r.status === 200);
	expect(answered).toHaveLength(200);
	// paced client-side on the server's own window: not a single 429
	expect(rateLimited).toBe(0);

	// 100 at once, the next 100 when the first leave the window: one minute, not 200 x 600 ms.
	// Judged from the sandbox's arrival times (whole seconds, in arrival order), not from how
	// long the machine took: a client spacing its requests evenly shows no pause, one stuck at
	// the default 60 a minute pauses after the 60th, one waiting a window too many takes two.
	const at = answered.map((r) => Date.parse(r.at));
	const gaps = at.slice(1).map((t, i) => t - at[i]);
	const pause = at[100] - at[99];
	expect(gaps.indexOf(Math.max(...gaps))).toBe(99);
	// each hundred went out in less time than the pause between them lasted
	expect(at[99] - at[0]).toBeLessThan(pause);
	expect(at[199] - at[100]).toBeLessThan(pause);
	// the second hundred waited for the first to leave the 60 s window; all fit in two windows
	expect(at[100] - at[0]).toBeGreaterThanOrEqual(59_000);
	expect(at[199] - at[0]).toBeLessThan(120_000);
}, 150_000);
