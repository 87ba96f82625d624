import { json, pairedItems, setUpNodeTests, type NodeTestContext } from './setup';

/**
 * The completions change feed through the node. A sandbox without demo records gets 2,100
 * generated records (all completed or viewed), so every count below is exact.
 */
let t: NodeTestContext;
const TOTAL = 2100;

beforeAll(async () => {
	t = await setUpNodeTests('completions', { demoData: false });
	await t.sandbox.control.generateFeed(TOTAL);
});
afterAll(async () => await t.close());
afterEach(async () => await t.sandbox.control.clearFaults());

// Full records (Simplify off): these tests check the feed's fields; Simplify has test/node/simplify.test.ts.
const feed = (extra: Record<string, unknown> = {}) => ({
	resource: 'completion',
	operation: 'getMany',
	simple: false,
	...extra,
});
const ids = (records: Array<Record<string, unknown>>) =>
	records.map((r) => r.completionid as number);

describe('completion: getMany', () => {
	test('Return All reads 2,100 records in pages of 500, following next_cursor until null', async () => {
		const before = (await t.requests('/completions')).length;
		const result = await t.run(feed({ returnAll: true, options: { showSuspended: true } }));
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records).toHaveLength(TOTAL);
		expect(new Set(ids(records)).size).toBe(TOTAL);
		expect(new Set(pairedItems(result))).toEqual(new Set([0]));
		for (const record of records.slice(0, 5)) {
			expect(record.lastupdated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
			expect(record.completionstatus).toMatch(/^(Completed|Viewed)$/);
		}
		const requests = (await t.requests('/completions')).slice(before);
		expect(requests).toHaveLength(5); // 500 + 500 + 500 + 500 + 100
		expect(requests.every((r) => r.query.limit === '500' && r.query.showSuspended === 'true')).toBe(
			true,
		);
		expect(requests[0].query.cursor).toBeUndefined();
		expect(
			requests.slice(1).every((r) => typeof r.query.cursor === 'string' && r.query.cursor !== ''),
		).toBe(true);
	});

	test('the same filters go out on every page (the cursor does not keep them)', async () => {
		const before = (await t.requests('/completions')).length;
		const result = await t.run(
			feed({
				returnAll: true,
				filters: { contentType: 'course' },
				options: {
					showSuspended: true,
					userFields: true,
					includeEnrolments: true,
					showNotCompleted: true,
					contentFields: true,
				},
			}),
		);
		expect(result.error).toBeUndefined();
		const records = json(result);
		expect(records.length).toBeGreaterThan(500);
		expect(records.every((r) => r.contenttype === 'Course' && typeof r.userdata === 'object')).toBe(
			true,
		);
		const requests = (await t.requests('/completions')).slice(before);
		expect(requests.length).toBeGreaterThan(1);
		for (const request of requests) {
			expect(request.query).toMatchObject({
				contentType: 'course',
				showSuspended: 'true',
				userFields: 'true',
				includeEnrolments: 'true',
				showNotCompleted: 'true',
				contentFields: 'true',
				limit: '500',
			});
		}
	});

	test('Limit stops at that many records; the sync state item lets the next run continue exactly there', async () => {
		const first = await t.run(
			feed({ limit: 120, options: { showSuspended: true, outputSyncState: true } }),
		);
		expect(first.error).toBeUndefined();
		const firstItems = json(first);
		expect(firstItems).toHaveLength(121);
		expect(first.hints.map((h) => h.message)).toEqual([
			expect.stringContaining('Stopped at the limit of 120 records; the feed has more'),
		]);
		const state = firstItems[120].syncState as Record<string, unknown>;
		const firstRecords = firstItems.slice(0, 120);
		expect(state).toEqual({
			next_cursor: expect.any(String),
			newest_lastupdated: firstRecords
				.map((r) => r.lastupdated as string)
				.sort()
				.at(-1),
			reached_end: false,
			records: 120,
			requests: 1,
			cursor_rejected: false,
		});

		const second = await t.run(
			feed({ cursor: state.next_cursor, limit: 50, options: { showSuspended: true } }),
		);
		expect(second.error).toBeUndefined();
		const secondRecords = json(second);
		expect(secondRecords).toHaveLength(50);
		expect(second.hints).toHaveLength(1);

		// the same 170 records, in the same order, as one walk would give
		const reference = json(await t.run(feed({ limit: 170, options: { showSuspended: true } })));
		expect([...ids(firstRecords), ...ids(secondRecords)]).toEqual(ids(reference));
	});

	test('a record changed mid-walk is output once, in its latest version, at its new position', async () => {
		// The change must land after page 1 was read and before the walk reads its tail (page 5 of
		// 5). Pages 1 and 2 are held by a delay fault; whether the change landed in time is read
		// from the sandbox's log, by order, not by time: page 1 had been answered before the
		// change was made, and no more than 2 pages had arrived once it was made (page 3 is asked
		// for only after page 2 was read). When a busy machine misses that, the hold doubles.
		for (let holdMs = 1500; ; holdMs *= 2) {
			const [firstRecord] = json(await t.run(feed({ limit: 1, options: { showSuspended: true } })));
			const changedId = firstRecord.completionid as number;
			await t.sandbox.control.setFaults({
				kind: 'delay',
				delayMs: holdMs,
				pathPattern: '/completions$',
				count: 2,
			});
			const before = (await t.requests('/completions')).length;
			let finished = false;
			const running = t
				.run(feed({ returnAll: true, options: { showSuspended: true } }))
				.finally(() => (finished = true));
			let changed: Record<string, unknown> | undefined;
			let pagesArrivedByThen = Infinity;
			while (!changed && !finished) {
				const served = (await t.requests('/completions')).slice(before);
				// status is set when page 1 has been answered (the entry is logged on arrival)
				if (served.length >= 1 && served[0].status !== null) {
					changed = (await t.sandbox.control.simulateRecordChange(changedId)).completion;
					pagesArrivedByThen = (await t.requests('/completions')).slice(before).length;
				} else await new Promise((resolve) => setTimeout(resolve, 20));
			}
			const result = await running;
			await t.sandbox.control.clearFaults();
			if (!changed || pagesArrivedByThen > 2) {
				if (holdMs >= 6000)
					throw new Error(
						`the change never landed between page 1 and page 3 of the walk (pages held up to ${holdMs} ms)`,
					);
				continue;
			}
			expect(result.error).toBeUndefined();

			const records = json(result);
			expect(records).toHaveLength(TOTAL); // not TOTAL + 1
			const occurrences = records.filter((r) => r.completionid === changedId);
			expect(occurrences).toEqual([changed]);
			expect(records.at(-1)).toEqual(changed); // moved to the tail, where its latest version was read
			expect(String(changed.comment)).toMatch(/^Record updated /);
			return;
		}
	});

	test('a rejected cursor restarts from "Updated Since" and says so in a hint and the sync state', async () => {
		const all = json(await t.run(feed({ returnAll: true, options: { showSuspended: true } })));
		const since = all
			.map((r) => r.lastupdated as string)
			.sort()
			.at(-1)!;
		const expected = all.filter((r) => (r.lastupdated as string) >= since);

		const before = (await t.requests('/completions')).length;
		const result = await t.run(
			feed({
				returnAll: true,
				cursor: 'not-a-cursor',
				updatedSince: since,
				options: { showSuspended: true, outputSyncState: true },
			}),
		);
		expect(result.error).toBeUndefined();
		const items = json(result);
		const state = items.at(-1)!.syncState as Record<string, unknown>;
		expect(state.cursor_rejected).toBe(true);
		expect(state.restarted_from).toBe(since);
		expect(ids(items.slice(0, -1))).toEqual(ids(expected));
		expect(result.hints.map((h) => h.message)).toEqual([
			expect.stringContaining(
				`rejected the cursor from "Start From Cursor", so the feed was read again from ${since}`,
			),
		]);

		const requests = (await t.requests('/completions')).slice(before);
		expect(requests[0].query.cursor).toBe('not-a-cursor');
		expect(requests[1].query.cursor).toBeUndefined();
		expect(requests[1].query.updatedSince).toBe(since);
	});

	test('a rejected cursor without "Updated Since" fails instead of re-reading from the beginning', async () => {
		const before = (await t.requests('/completions')).length;
		const result = await t.run(feed({ returnAll: true, cursor: 'not-a-cursor' }));
		expect(result.error?.message).toBe(
			'The feed rejected the cursor: cursor: The cursor is invalid. Restart from updatedSince.',
		);
		expect(result.error?.description).toContain('"Updated Since"');
		expect((await t.requests('/completions')).slice(before)).toHaveLength(1);
	});

	test('a Limit of 0 (e.g. from an expression) is refused naming the field, without a request', async () => {
		const before = (await t.requests('/completions')).length;
		for (const limit of [0, -3, 2.5]) {
			const result = await t.run(feed({ limit }));
			expect(result.error?.message).toBe(
				`"Limit" must be a whole number of at least 1, got ${limit}`,
			);
			expect(result.error?.description).toContain('Return All');
		}
		expect((await t.requests('/completions')).length).toBe(before);
	});

	test("other Failed answers become errors with the server's messages", async () => {
		const result = await t.run(feed({ filters: { contentType: 'podcast' } }));
		expect(result.error?.message).toBe(
			'The completions feed refused the request: contentType: The selected contentType is invalid. Allowed values: course, live learning, resource, video.',
		);
	});

	test('an empty feed page outputs no items, and the sync state keeps the given time', async () => {
		const result = await t.run(
			feed({ updatedSince: '2999-01-01T00:00:00Z', options: { outputSyncState: true } }),
		);
		expect(result.error).toBeUndefined();
		expect(json(result)).toEqual([
			{
				syncState: {
					next_cursor: null,
					newest_lastupdated: '2999-01-01T00:00:00Z',
					reached_end: true,
					records: 0,
					requests: 1,
					cursor_rejected: false,
				},
			},
		]);
	});
});

describe('completion: getMany "Updated Since" conversion', () => {
	// what reached the API for one run
	async function sentUpdatedSince(value: unknown): Promise<{ sent?: string; error?: string }> {
		const before = (await t.requests('/completions')).length;
		const result = await t.run(feed({ limit: 1, updatedSince: value }));
		const requests = (await t.requests('/completions')).slice(before);
		return { sent: requests[0]?.query.updatedSince, error: result.error?.message };
	}

	test.each([
		['strict Z form unchanged', '2024-05-01T09:00:00Z', '2024-05-01T09:00:00Z'],
		['offset form converted to UTC', '2024-05-01T11:00:00+02:00', '2024-05-01T09:00:00Z'],
		[
			'+00:00 form (rejected by the API) rewritten',
			'2024-05-01T09:00:00+00:00',
			'2024-05-01T09:00:00Z',
		],
		['milliseconds cut, never rounded up', '2024-05-01T09:00:00.999Z', '2024-05-01T09:00:00Z'],
		['negative offset without colon', '2024-05-01T04:30:00-0430', '2024-05-01T09:00:00Z'],
		// the date picker gives wall-clock time; n8n's default workflow zone is America/New_York
		[
			'date picker value in the workflow zone (summer)',
			'2024-05-01T09:00:00',
			'2024-05-01T13:00:00Z',
		],
		[
			'date picker value in the workflow zone (winter)',
			'2024-01-15T09:00:00',
			'2024-01-15T14:00:00Z',
		],
		['date only = midnight in the workflow zone', '2024-05-01', '2024-05-01T04:00:00Z'],
		['epoch milliseconds', '={{ 1714554000000 }}', '2024-05-01T09:00:00Z'],
		['epoch seconds', '={{ 1714554000 }}', '2024-05-01T09:00:00Z'],
		[
			'Luxon DateTime from an expression',
			"={{ DateTime.fromISO('2024-05-01T11:00:00', { zone: 'Europe/Berlin' }) }}",
			'2024-05-01T09:00:00Z',
		],
		[
			'JS Date from an expression',
			"={{ new Date('2024-05-01T09:00:00.500Z') }}",
			'2024-05-01T09:00:00Z',
		],
	])('%s', async (_name, value, expected) => {
		expect(await sentUpdatedSince(value)).toEqual({ sent: expected, error: undefined });
	});

	test.each([
		['words', 'yesterday'],
		['impossible date', '2024-02-30T10:00:00Z'],
		['month 13', '2024-13-01'],
	])('%s is rejected naming the field, before any request', async (_name, value) => {
		const before = (await t.requests('/completions')).length;
		const result = await t.run(feed({ limit: 1, updatedSince: value }));
		expect(result.error?.message).toBe(`The value of "Updated Since" is not a date: "${value}"`);
		expect(result.error?.description).toContain('ISO 8601');
		expect((await t.requests('/completions')).slice(before)).toHaveLength(0);
	});
});
