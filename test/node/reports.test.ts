import { json, pairedItems, setUpNodeTests, type NodeTestContext } from './setup';
import { clock, useClock } from '../../nodes/shared/transport/clock';
import {
	MAX_POLL_INTERVAL_MS,
	nextPollOffsetMs,
} from '../../nodes/LearningPlatform/helpers/reports';

let t: NodeTestContext;
let courseId: number;
let liveLearningId: number;

beforeAll(async () => {
	t = await setUpNodeTests('reports');
	const demo = await t.sandbox.control.demo();
	courseId = demo.content.find((c) => c.contenttype === 'Course' && !c.deleted)!.id;
	liveLearningId = demo.content.find((c) => c.contenttype === 'Live Learning' && !c.deleted)!.id;
});
afterAll(async () => await t.close());
afterEach(async () => {
	await t.sandbox.control.setConfig({ reportReadyAfterPolls: 2, reportReadyAfterMs: 0 });
});

// Full records (Simplify off): these tests check the API's fields; Simplify has test/node/simplify.test.ts.
const activityCompletions = (extra: Record<string, unknown> = {}) => ({
	resource: 'report',
	operation: 'getActivityCompletions',
	simple: false,
	...extra,
});

describe('report: getActivityCompletions', () => {
	test('submits, polls with the requestid until Complete, and outputs one item per record', async () => {
		const result = await t.run(activityCompletions({ contentId: String(courseId) }));
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records.length).toBeGreaterThan(0);
		for (const record of records) {
			expect(record.contentid).toBe(courseId);
			expect(typeof record.activityid).toBe('number');
			expect(typeof record.username).toBe('string');
			expect(record.userdata).toBeUndefined();
		}
		expect(new Set(pairedItems(result))).toEqual(new Set([0]));

		const requests = await t.requests('/activitycompletions');
		expect(requests).toHaveLength(3); // submit + 2 polls (ready on the 2nd poll)
		expect(requests[0].query).toEqual({ contentId: String(courseId) });
		const requestId = requests[1].query.requestid;
		expect(requestId).toMatch(/^\d+$/);
		expect(requests[2].query).toEqual({ requestid: requestId });
	});

	test('sends the filters and flags that are set, and adds userdata when asked', async () => {
		const demo = await t.sandbox.control.demo();
		const learner = demo.users.find((u) => !u.deleted && !u.suspended)!;
		const result = await t.run(
			activityCompletions({
				userId: String(learner.id),
				filters: { contentType: 'Course' },
				options: { userFields: true, showSuspended: true },
			}),
		);
		expect(result.error).toBeUndefined();
		const submit = (await t.requests('/activitycompletions')).at(-3)!;
		expect(submit.query).toEqual({
			userId: String(learner.id),
			contentType: 'Course',
			userFields: 'true',
			showSuspended: 'true',
		});
		for (const record of json(result)) {
			expect(record.userid).toBe(learner.id);
			expect(record.contenttype).toBe('Course');
			expect(record.userdata).toEqual(expect.any(Object));
		}
	});

	test('without User ID and Content ID it fails before any request, naming both fields', async () => {
		const before = (await t.requests('/activitycompletions')).length;
		const result = await t.run(activityCompletions({ userId: '', contentId: '' }));
		expect(result.error?.message).toBe('User ID or Content ID is required');
		expect(result.output).toEqual([]);
		expect(await t.requests('/activitycompletions')).toHaveLength(before);
	});

	test('an ID that is not a whole number is rejected naming the field', async () => {
		const result = await t.run(activityCompletions({ contentId: '12abc' }));
		expect(result.error?.message).toBe('"Content ID" must be a positive whole number, got "12abc"');
	});

	test("a Failed answer of the server becomes an error carrying the server's messages", async () => {
		const result = await t.run(
			activityCompletions({ contentId: String(courseId), filters: { contentType: 'Podcast' } }),
		);
		expect(result.error?.name).toBe('NodeApiError');
		expect(result.error?.message).toMatch(
			/^The Activity Completions report failed \(request ID \d+\): contentType: The selected contentType is invalid/,
		);
	});

	test('with "Wait for Result" off it outputs {requestid, status} at once; Get Result fetches the records later', async () => {
		const submitted = await t.run(
			activityCompletions({ contentId: String(courseId), options: { waitForResult: false } }),
		);
		expect(submitted.error).toBeUndefined();
		const [pending] = json(submitted);
		expect(pending).toEqual({ requestid: expect.any(Number), status: 'Processing' });
		expect(json(submitted)).toHaveLength(1);

		// poll once, not waiting: still processing after one poll (ready after two)
		const once = await t.run({
			resource: 'report',
			operation: 'getResult',
			reportType: 'activitycompletions',
			requestId: String(pending.requestid),
			options: { waitForResult: false },
		});
		expect(json(once)).toEqual([{ requestid: pending.requestid, status: 'Processing' }]);

		const waited = await t.run({
			resource: 'report',
			operation: 'getResult',
			reportType: 'activitycompletions',
			requestId: String(pending.requestid),
		});
		expect(waited.error).toBeUndefined();
		const records = json(waited);
		expect(records.length).toBeGreaterThan(0);
		expect(records.every((record) => record.contentid === courseId)).toBe(true);
	});

	test('a slow report is polled with growing gaps until it is ready', async () => {
		await t.sandbox.control.setConfig({ reportReadyAfterPolls: 1, reportReadyAfterMs: 2500 });
		const started = Date.now();
		const result = await t.run(activityCompletions({ contentId: String(courseId) }));
		const elapsed = Date.now() - started;
		expect(result.error).toBeUndefined();
		expect(json(result).length).toBeGreaterThan(0);
		expect(elapsed).toBeGreaterThanOrEqual(2500);

		const requests = await t.requests('/activitycompletions');
		const submits = requests
			.map((r, index) => (r.query.requestid === undefined ? index : -1))
			.filter((i) => i >= 0);
		const polls = requests.slice(submits[submits.length - 1] + 1);
		// polls at 1 s, 2 s, 4 s...: ready after 2.5 s takes 3 polls; a fixed 250 ms interval
		// would have taken 10
		expect(polls.length).toBeGreaterThanOrEqual(2);
		expect(polls.length).toBeLessThanOrEqual(4);
	});

	test('a report that is not ready within the timeout fails naming the request ID and Get Result', async () => {
		await t.sandbox.control.setConfig({ reportReadyAfterPolls: 1, reportReadyAfterMs: 120_000 });
		// every wait the node takes, recorded on the clock it waits on
		const running = clock();
		const slept: number[] = [];
		const restore = useClock({
			now: () => running.now(),
			sleep: async (ms, signal) => {
				slept.push(ms);
				await running.sleep(ms, signal);
			},
		});
		const started = Date.now();
		const result = await t
			.run(activityCompletions({ contentId: String(courseId), options: { timeout: 2 } }))
			.finally(restore);
		expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
		const requests = await t.requests('/activitycompletions');
		// what followed this run's submit (the last request without a requestid)
		const polls = requests.slice(
			requests.map((r) => 'requestid' in r.query).lastIndexOf(false) + 1,
		);
		// it polled until the deadline, at 1 s and 2 s (one poll more only should the 2 s timer end
		// a millisecond early), then failed at once: every wait was followed by a poll, and the
		// waits add up to no more than the 2 s timeout (waiting on to the next poll, 4 s, would not)
		expect(polls.length).toBeGreaterThanOrEqual(2);
		expect(polls.length).toBeLessThanOrEqual(3);
		expect(slept).toHaveLength(polls.length);
		expect(slept.reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual(2000);
		const requestId = requests[requests.length - 1].query.requestid;
		expect(requestId).toMatch(/^\d+$/);
		expect(result.error?.message).toBe(
			`The Activity Completions report (request ID ${requestId}) was not ready within 2 seconds`,
		);
		expect(result.error?.description).toContain('"Get Result"');
		expect(result.error?.description).toContain(`Request ID ${requestId}`);
	});

	test('several items: each runs its own report, outputs are paired to their item', async () => {
		const demo = await t.sandbox.control.demo();
		const learners = demo.users.filter((u) => !u.deleted && !u.suspended).slice(0, 2);
		const result = await t.run(activityCompletions({ userId: '={{ $json.userId }}' }), {
			items: learners.map((learner) => ({ json: { userId: learner.id } })),
		});
		expect(result.error).toBeUndefined();
		const records = json(result);
		const pairs = pairedItems(result);
		records.forEach((record, index) => expect(record.userid).toBe(learners[pairs[index]].id));
	});

	test('continueOnFail: a failing item becomes an error item paired to it, the others still run', async () => {
		const result = await t.run(activityCompletions({ contentId: '={{ $json.contentId }}' }), {
			items: [{ json: { contentId: '' } }, { json: { contentId: courseId } }],
			continueOnFail: true,
		});
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records[0]).toEqual({ error: 'User ID or Content ID is required' });
		expect(pairedItems(result)[0]).toBe(0);
		expect(records.length).toBeGreaterThan(1);
		expect(
			pairedItems(result)
				.slice(1)
				.every((item) => item === 1),
		).toBe(true);
	});

	test('without continueOnFail the error carries the failing item index', async () => {
		const result = await t.run(activityCompletions({ contentId: '={{ $json.contentId }}' }), {
			items: [{ json: { contentId: courseId } }, { json: { contentId: 'x' } }],
		});
		expect(result.error?.message).toBe('"Content ID" must be a positive whole number, got "x"');
		expect(result.error?.context?.itemIndex).toBe(1);
	});
});

describe('report: getAttendance and getContent', () => {
	test('attendance of one Live Learning content, with session and content fields', async () => {
		const result = await t.run({
			resource: 'report',
			operation: 'getAttendance',
			simple: false,
			filters: { contentId: String(liveLearningId) },
			options: { sessionFields: true, contentFields: true },
		});
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records.length).toBeGreaterThan(0);
		for (const record of records) {
			expect(record.contentid).toBe(liveLearningId);
			expect(record.contenttype).toBe('Live Learning');
			expect(record.sessiondata).toEqual(expect.any(Object));
			expect(record.contentdata).toEqual(expect.any(Object));
			expect(record.userdata).toBeUndefined();
		}
		const submit = (await t.requests('/attendance')).find((r) => r.query.requestid === undefined)!;
		expect(submit.query).toEqual({
			contentId: String(liveLearningId),
			contentFields: 'true',
			sessionFields: 'true',
		});
	});

	test('content filtered by type outputs one item per content record', async () => {
		const demo = await t.sandbox.control.demo();
		const videos = demo.content.filter((c) => c.contenttype === 'Video' && !c.deleted);
		const result = await t.run({
			resource: 'report',
			operation: 'getContent',
			filters: { contentType: 'video' },
		});
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records.map((r) => r.contentid).sort()).toEqual(videos.map((v) => v.id).sort());
		expect(records.every((r) => r.contenttype === 'Video')).toBe(true);
	});

	test("Get Result with an unknown request ID reports the server's error", async () => {
		const result = await t.run({
			resource: 'report',
			operation: 'getResult',
			reportType: 'content',
			requestId: '999999',
		});
		expect(result.error?.message).toBe(
			'The Content report failed (request ID 999999): requestid: The requestid is unknown.',
		);
	});
});

describe('report polling schedule', () => {
	/** Polls a blind poller on this schedule sends for a report ready `readyMs` after submission, and how late it sees it. */
	function pollsFor(readyMs: number) {
		let offset = 0;
		let polls = 0;
		do {
			offset = nextPollOffsetMs(offset);
			polls++;
		} while (offset < readyMs);
		return { polls, lateMs: offset - readyMs };
	}

	test('up to 32 s at most 2 + log2(seconds) polls, then one per 30 s; never later than the time already waited (or 30 s)', () => {
		for (let readyMs = 1000; readyMs <= 600_000; readyMs += 250) {
			const { polls, lateMs } = pollsFor(readyMs);
			const allowed =
				readyMs <= 32_000
					? 2 + Math.log2(readyMs / 1000)
					: 7 + Math.ceil((readyMs - 32_000) / MAX_POLL_INTERVAL_MS);
			expect({ readyMs, polls: polls <= allowed }).toEqual({ readyMs, polls: true });
			expect({ readyMs, late: lateMs <= Math.min(readyMs, MAX_POLL_INTERVAL_MS) }).toEqual({
				readyMs,
				late: true,
			});
		}
		expect(pollsFor(1000)).toEqual({ polls: 1, lateMs: 0 });
	});
});
