/**
 * Row 1, bulk writes: Bookmark → Create over many input items (one POST per item, paced by the
 * transport under the API user's rate limit), through n8n-core's WorkflowExecute.
 *
 * Two runs, each with twice as many items as the limit allows per minute, on a fresh API user:
 * - 1,200 items with the sandbox at 600/min (the scaled-up case, to keep the run short),
 * - 120 items at the real 60/min (skipped with --quick).
 *
 * Why twice the limit: the API's limit is a sliding 60 s window and the transport mirrors it (a
 * request may start when fewer than `limit` requests started in the last 60 s). The first `limit`
 * items therefore go out at once and the pacing only shows from item `limit + 1` on; with the
 * issue's 600 items at 600/min the window never fills and nothing is measured about pacing.
 *
 * The transport is not configured: it learns the limit from the `X-Ratelimit-Limit` header of its
 * first answer (it lets one request through until then).
 *
 * Figures:
 * - achieved rate ÷ limit = 60 s ÷ mean(t[i + limit] − t[i]) over the client-side start times of
 *   the requests that were accepted: the steady-state rate once the window is full, as a fraction
 *   of the allowed rate (1.0 = each request starts the moment its slot frees);
 * - failed items (continueOnFail on, so every item is reported); 429s received (sandbox stats) and
 *   retried (a 429 followed by the same item succeeding);
 * - busiest 60 s window ÷ limit (client-side starts): never above 1.0 if the pacing is right.
 */
import { executeNode } from '../../test/support/n8n';
import type { RowOptions } from '../run';
import {
	failedResult,
	fixed,
	httpTap,
	mean,
	median,
	metric,
	newApiUser,
	progress,
	seconds,
	startBenchSandbox,
	type BenchSandbox,
	type Metric,
	type RowResult,
} from '../lib/common';
import { LearningPlatform } from '../lib/nodes';

interface Case {
	limit: number;
	items: number;
}

async function runCase(
	sandbox: BenchSandbox,
	c: Case,
	subjects: Array<{ username: string; contentId: number }>,
): Promise<{ metrics: Metric[]; notes: string[] }> {
	await sandbox.control.setConfig({ rateLimitPerMinute: c.limit });
	const { username, credentials } = await newApiUser(sandbox, `bulk${c.limit}`);
	const statsBefore = await sandbox.control.stats();
	const items = subjects.slice(0, c.items).map((s) => ({ json: s }));
	const tag = `${c.items} items @ ${c.limit}/min`;

	progress(`bulk: ${tag} ...`);
	const tap = httpTap();
	const t0 = performance.timeOrigin + performance.now();
	const result = await executeNode({
		nodeType: new LearningPlatform(),
		parameters: {
			resource: 'bookmark',
			operation: 'create',
			username: '={{ $json.username }}',
			contentId: '={{ $json.contentId }}',
			contentType: 'course',
		},
		items,
		credentials,
		continueOnFail: true,
	});
	const wall = performance.timeOrigin + performance.now() - t0;
	tap.stop();
	if (result.error) throw result.error;
	const output = result.output[0] ?? [];
	const failed =
		output.filter((item) => item.json.error !== undefined || typeof item.json.id !== 'number')
			.length +
		(c.items - output.length);
	const statsAfter = await sandbox.control.stats();
	const serverRateLimited = statsAfter.rate_limited - statsBefore.rate_limited;

	const posts = tap.requests.filter((r) => r.method === 'POST' && r.path.includes('/bookmarks/'));
	const accepted = posts.filter((r) => r.status !== 429).map((r) => r.start);
	const got429 = posts.filter((r) => r.status === 429).length;
	// a 429 is retried when the transport sent the request again: accepted POSTs = items, so every
	// 429 beyond that count was followed by a successful repeat
	const retried = got429 > 0 && accepted.length === c.items ? got429 : 0;
	const gaps: number[] = [];
	for (let i = 0; i + c.limit < accepted.length; i++)
		gaps.push(accepted[i + c.limit] - accepted[i]);
	const meanGap = mean(gaps);
	const ratio = 60_000 / meanGap;
	let busiest = 0;
	for (let i = 0, j = 0; i < accepted.length; i++) {
		while (accepted[j] < accepted[i] - 60_000 + 1e-9 && j < i) j++;
		busiest = Math.max(busiest, i - j + 1);
	}
	const firstWindowMs = accepted[c.limit - 1] - accepted[0];
	// where the time went in each half: the interval between request starts, the request's own time
	const acceptedPosts = posts.filter((r) => r.status !== 429);
	const halves = [acceptedPosts.slice(0, c.limit), acceptedPosts.slice(c.limit)].map((half) => {
		const intervals = half.slice(1).map((r, i) => r.start - half[i].start);
		const own = half.filter((r) => r.end !== undefined).map((r) => (r.end as number) - r.start);
		return `start interval median ${fixed(median(intervals), 1)} ms / mean ${fixed(mean(intervals), 1)} ms, request time median ${fixed(median(own), 1)} ms`;
	});
	progress(
		`bulk: ${tag}: ${output.length - failed}/${c.items} created in ${seconds(wall)}, rate ÷ limit ${fixed(ratio, 3)}, 429s ${got429}/${serverRateLimited}`,
	);

	return {
		metrics: [
			metric(
				`${tag}: achieved rate ÷ limit`,
				ratio,
				`${fixed(ratio, 3)} (mean gap t[i+${c.limit}]−t[i] ${seconds(meanGap, 2)})`,
				{ text: '≥ 0.95', pass: ratio >= 0.95 },
			),
			metric(`${tag}: failed items`, failed, `${failed}/${c.items}`, {
				text: '0',
				pass: failed === 0,
			}),
			metric(`${tag}: 429s received / retried`, got429, `${serverRateLimited} / ${retried}`, {
				text: 'retried = received',
				pass: retried === got429 && got429 === serverRateLimited,
			}),
			metric(
				`${tag}: busiest 60 s window ÷ limit`,
				busiest / c.limit,
				`${fixed(busiest / c.limit, 3)} (${busiest})`,
			),
			metric(
				`${tag}: wall time`,
				wall,
				`${seconds(wall, 1)} (first ${c.limit} in ${seconds(firstWindowMs, 1)})`,
			),
		],
		notes: [
			`${tag}: API user ${username}; ${posts.length} POSTs sent; gaps t[i+${c.limit}]−t[i] min ${seconds(Math.min(...gaps), 3)}, max ${seconds(Math.max(...gaps), 3)}`,
			`${tag}: first ${c.limit} requests: ${halves[0]}; the rest: ${halves[1]}`,
		],
	};
}

export async function run(options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const title = 'Bulk writes: Bookmark → Create, 2 × limit items';
	const cases: Case[] = [
		{ limit: 600, items: 1200 },
		...(options.quick ? [] : [{ limit: 60, items: 120 }]),
	];
	const sandbox = await startBenchSandbox({ rateLimitPerMinute: 600, demo: true, logName: 'bulk' });
	try {
		const demo = await sandbox.control.demo();
		const learners = demo.users.filter((u) => !u.deleted && !u.suspended).map((u) => u.username);
		const courses = demo.content
			.filter((c) => c.contenttype === 'Course' && !c.deleted)
			.map((c) => c.id);
		// distinct learner/course pairs: every item creates a new bookmark
		const subjects: Array<{ username: string; contentId: number }> = [];
		for (let i = 0; subjects.length < 1200 && i < learners.length * courses.length; i++) {
			subjects.push({
				username: learners[i % learners.length],
				contentId: courses[Math.floor(i / learners.length) % courses.length],
			});
		}
		const metrics: Metric[] = [];
		const notes: string[] = [];
		for (const c of cases) {
			const r = await runCase(sandbox, c, subjects);
			metrics.push(...r.metrics);
			notes.push(...r.notes);
		}
		return {
			id: 'bulk',
			title,
			mode: 'in-process (n8n-core WorkflowExecute)',
			settings: { cases, operation: 'bookmark/create', continueOnFail: true },
			metrics,
			notes: [
				...notes,
				"2 × limit items per case: with a sliding 60 s window the first `limit` requests go out at once, pacing only shows after that (the issue's 600 items at 600/min would fit in one window)",
				'the transport is not configured: it learns the limit from X-Ratelimit-Limit on its first answer',
				...(options.quick ? ['--quick: the 120 items at 60/min case was skipped'] : []),
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'bulk', title, mode: 'in-process' }, t0, error);
	} finally {
		await sandbox.stop();
	}
}
