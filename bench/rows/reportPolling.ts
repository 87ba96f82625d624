/**
 * Row 3, report polling: Report → Get Content with "Wait for Result" (the default) against a
 * sandbox whose reports become `Complete` 1 s, 5 s and 30 s after submission
 * (`reportReadyAfterMs`, `reportReadyAfterPolls: 1`: the first poll after that time gets the data).
 *
 * - extra latency = when the node finished − when the report was ready on the server
 *   (submission as logged by the sandbox + the delay); target ≤ max(1 s, 10 % of the delay);
 * - polls = requests carrying `requestid`, counted from the sandbox's request log (the submission
 *   is not a poll); target ≤ 2 + log2(delay in seconds).
 *
 * The sandbox's rate limit stays at the real 60/min: a handful of requests per report.
 */
import {
	MAX_POLL_INTERVAL_MS,
	nextPollOffsetMs,
} from '../../nodes/LearningPlatform/helpers/reports';
import { executeNode } from '../../test/support/n8n';
import type { RowOptions } from '../run';
import {
	failedResult,
	fixed,
	httpTap,
	metric,
	newApiUser,
	progress,
	seconds,
	startBenchSandbox,
	type Metric,
	type RowResult,
} from '../lib/common';
import { LearningPlatform } from '../lib/nodes';

const RATE_LIMIT = 60;

/**
 * Polls that a schedule blind to the ready time needs, up to `delay` seconds, to keep the extra
 * latency within max(1 s, 10 %) for EVERY ready time up to `delay`: after a poll at t the next
 * may come at most max(1 s, 10 % of t) later (a report ready just after t waits that long).
 */
export function pollsForLatencyTarget(delay: number): number {
	let t = 0;
	let polls = 0;
	while (t < delay) {
		t += Math.max(1, 0.1 * t);
		polls++;
	}
	return polls;
}

export async function run(options: RowOptions): Promise<RowResult> {
	const t0 = Date.now();
	const delays = options.quick ? [1, 5] : [1, 5, 30];
	const title = 'Report polling: ready after 1 s, 5 s, 30 s';
	const sandbox = await startBenchSandbox({
		rateLimitPerMinute: RATE_LIMIT,
		demo: true,
		logName: 'reports',
	});
	try {
		const { username, credentials } = await newApiUser(sandbox, 'reports');
		const nodeType = new LearningPlatform();
		const parameters = {
			resource: 'report',
			operation: 'getContent',
			options: { waitForResult: true, timeout: 300 },
		};

		// warm-up (key exchange, code paths) with an immediately complete report
		await sandbox.control.setConfig({ reportReadyAfterPolls: 0, reportReadyAfterMs: 0 });
		const warm = await executeNode({ nodeType, parameters, credentials });
		if (warm.error) throw warm.error;

		const metrics: Metric[] = [];
		const notes: string[] = [];
		for (const delay of delays) {
			await sandbox.control.setConfig({
				reportReadyAfterPolls: 1,
				reportReadyAfterMs: delay * 1000,
			});
			await sandbox.control.clearRequests();
			progress(`reports: ready after ${delay} s ...`);
			const tap = httpTap();
			const result = await executeNode({ nodeType, parameters, credentials });
			const finished = performance.timeOrigin + performance.now();
			tap.stop();
			if (result.error) throw result.error;
			const records = result.output[0]?.length ?? 0;

			// polls counted by the server; times taken on the client (the server log has whole seconds)
			const serverLog = (await sandbox.control.requests({ username, path: '/content' })).filter(
				(r) => r.method === 'GET',
			);
			const serverPolls = serverLog.filter((r) => 'requestid' in r.query).length;
			const sent = tap.requests.filter((r) => r.path.includes('/content'));
			const submit = sent.find((r) => !r.path.includes('requestid='));
			const polls = sent.filter((r) => r.path.includes('requestid='));
			if (!submit) throw new Error('no submission seen');
			if (polls.length !== serverPolls)
				throw new Error(`the client sent ${polls.length} polls, the server logged ${serverPolls}`);
			// the server stamps the submission while handling it, after the client started it: taking the
			// client's start makes "ready" early by the round trip (a few ms), so the extra latency is not flattered
			const submittedAt = submit.start;
			const readyAt = submittedAt + delay * 1000;
			const extra = finished - readyAt;
			const extraTarget = Math.max(1000, delay * 100);
			const pollTarget = 2 + Math.log2(delay);
			const schedule = polls.map((p) => ((p.start - submittedAt) / 1000).toFixed(2)).join(', ');
			const lastPoll = polls[polls.length - 1];
			const lastPollLag = lastPoll ? lastPoll.start - readyAt : NaN;
			progress(
				`reports: ${delay} s: ${records} records, ${polls.length} polls at +[${schedule}] s, finished ${seconds(extra)} after ready`,
			);

			metrics.push(
				metric(
					`${delay} s: extra latency after ready`,
					extra,
					`${seconds(extra)} (${fixed((extra / (delay * 1000)) * 100, 0)} % of ${delay} s)`,
					{
						text: `≤ ${seconds(extraTarget, 1)}`,
						pass: extra <= extraTarget,
					},
				),
				metric(`${delay} s: polls`, polls.length, `${polls.length} (+1 submission)`, {
					text: `≤ ${fixed(pollTarget, 2)}`,
					pass: polls.length <= pollTarget,
				}),
			);
			notes.push(
				`${delay} s: polls at +[${schedule}] s after the submission; the completing poll came ${seconds(lastPollLag)} after ready, the node finished ${seconds(finished - (lastPoll?.start ?? submit.start))} after that poll was sent; ${records} records`,
			);
		}
		return {
			id: 'reports',
			title,
			mode: 'in-process (n8n-core WorkflowExecute)',
			settings: {
				delaysSeconds: delays,
				reportReadyAfterPolls: 1,
				sandboxRateLimitPerMinute: RATE_LIMIT,
				operation: 'report/getContent',
			},
			metrics,
			notes: [
				...notes,
				`the node polls ${seconds(nextPollOffsetMs(0), 0)} after the submission, then at twice the time already waited, at most ${seconds(MAX_POLL_INTERVAL_MS, 0)} apart (nodes/LearningPlatform/helpers/reports.ts nextPollOffsetMs)`,
				`the two targets pull against each other for a poller that cannot know the ready time (the API gives no hint): keeping the extra latency within max(1 s, 10 %) for every ready time needs at least ${delays.map((d) => `${pollsForLatencyTarget(d)} by ${d} s`).join(', ')} polls, against poll targets of ${delays.map((d) => fixed(2 + Math.log2(d), 1)).join(', ')}`,
				...(options.quick ? ['--quick: the 30 s report was skipped'] : []),
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'reports', title, mode: 'in-process' }, t0, error);
	} finally {
		await sandbox.stop();
	}
}
