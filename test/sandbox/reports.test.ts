import { startSandbox } from '../../sandbox';
import { Api, useSandbox } from './helpers';

const ctx = useSandbox();

const OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const get = (name: string, q: Record<string, string | number | boolean>) =>
	ctx.api.get(`${ctx.api.r.report}/${name}`, q);

describe('asynchronous rules', () => {
	it('submit -> Processing + requestid; Complete on the 2nd poll (default); stays Complete with the same data', async () => {
		const first = await get('content', {});
		expect(first.status).toBe(200);
		expect(first.json).toEqual({ status: 'Processing', requestid: expect.any(Number) });
		const id = first.json.requestid;
		expect((await get('content', { requestid: id })).json).toEqual({
			status: 'Processing',
			requestid: id,
		});
		const done = await get('content', { requestid: id });
		expect(done.json).toEqual({ status: 'Complete', requestid: id, data: expect.any(Array) });
		expect(done.json.data.length).toBe(60);
		expect((await get('content', { requestid: id })).json).toEqual(done.json);
		// a new submission gets a new id
		expect((await get('content', {})).json.requestid).not.toBe(id);
	});

	it('readiness is configurable: after N polls and/or a duration on the sandbox clock', async () => {
		const own = await startSandbox({
			demoData: false,
			reportReadyAfterPolls: 0,
			rateLimitPerMinute: 10_000,
		});
		try {
			const a = await Api.login(own);
			const g = (q: Record<string, string | number>) => a.get(`${a.r.report}/content`, q);
			expect((await g({})).json.status).toBe('Complete'); // 0 polls: the first call is already Complete
			await own.control.setConfig({ reportReadyAfterPolls: 1, reportReadyAfterMs: 30_000 });
			const id = (await g({})).json.requestid;
			expect((await g({ requestid: id })).json.status).toBe('Processing');
			await own.control.advanceClock(30_000);
			expect((await g({ requestid: id })).json.status).toBe('Complete');
		} finally {
			await own.close();
		}
	});

	it('unknown requestid, or one of another API user or another report: Failed with errors.requestid', async () => {
		const other = await Api.login(ctx.sb);
		const id = (await get('content', {})).json.requestid;
		const theirs = await other.get(`${other.r.report}/content`, { requestid: id });
		expect(theirs.json).toEqual({
			status: 'Failed',
			requestid: id,
			errors: { requestid: [expect.any(String)] },
		});
		expect((await get('attendance', { requestid: id })).json.status).toBe('Failed');
		expect((await get('content', { requestid: 99_999_999 })).json.errors.requestid).toBeDefined();
	});
});

describe('activity completions (operation 2)', () => {
	it('without userId and contentId: HTTP 200, Failed, requestid, errors.exception', async () => {
		const res = await get('activitycompletions', { contentType: 'Course' });
		expect(res.status).toBe(200);
		expect(res.json).toEqual({
			status: 'Failed',
			requestid: expect.any(Number),
			errors: { exception: expect.stringMatching(/userId or a contentId/) },
		});
		// polling it keeps the failure
		expect((await get('activitycompletions', { requestid: res.json.requestid })).json.status).toBe(
			'Failed',
		);
	});

	it('records of one content, with userdata on request; activityId and contentType filter', async () => {
		const data = await ctx.api.report('activitycompletions', { contentId: 101, userFields: true });
		expect(data.length).toBeGreaterThan(10);
		for (const r of data) {
			expect(r).toEqual({
				userid: expect.any(Number),
				username: expect.any(String),
				activityid: expect.any(Number),
				activityname: expect.any(String),
				activitytimecompleted: expect.stringMatching(OFFSET),
				activitycompletionstatus: 'Completed',
				contentid: 101,
				contenttype: 'Course',
				contentname: 'Data Protection Essentials',
				userdata: expect.objectContaining({ Department: expect.any(String) }),
			});
		}
		const act = data[0].activityid;
		const one = await ctx.api.report('activitycompletions', { contentId: 101, activityId: act });
		expect(one.length).toBeGreaterThan(0);
		expect(one.every((r) => r.activityid === act && !('userdata' in r))).toBe(true);
		const user = data[0].userid;
		const mine = await ctx.api.report('activitycompletions', {
			userId: user,
			contentType: 'Live Learning',
		});
		expect(mine.every((r) => r.userid === user && r.contenttype === 'Live Learning')).toBe(true);
		const invalid = await get('activitycompletions', { userId: user, contentType: 'Video' });
		expect(invalid.json.errors.contentType).toBeDefined();
	});

	it('suspended users only with showSuspended', async () => {
		const demo = await ctx.sb.control.demo();
		const suspended = new Set(demo.users.filter((u) => u.suspended).map((u) => u.id));
		const rec = (await ctx.api.walk({ limit: 500, showSuspended: true })).records.find(
			(r) =>
				suspended.has(r.userid) && r.contenttype === 'Course' && r.completionstatus === 'Completed',
		);
		expect(rec).toBeDefined();
		expect(await ctx.api.report('activitycompletions', { userId: rec.userid })).toEqual([]);
		const shown = await ctx.api.report('activitycompletions', {
			userId: rec.userid,
			showSuspended: true,
		});
		expect(shown.some((r) => r.contentid === rec.contentid)).toBe(true);
	});
});

describe('attendance (operation 3)', () => {
	it('Live Learning attendance with both statuses and session types; optional objects on request', async () => {
		const plain = await ctx.api.report('attendance');
		expect(plain.length).toBeGreaterThan(50);
		expect(new Set(plain.map((r) => r.attendancestatus))).toEqual(
			new Set(['Attended', 'Did Not Attend']),
		);
		expect(new Set(plain.map((r) => r.sessiontype))).toEqual(new Set(['Face to Face', 'Virtual']));
		for (const r of plain) {
			expect(Object.keys(r).sort()).toEqual(
				[
					'userid',
					'username',
					'contentid',
					'sessionid',
					'contenttype',
					'contentname',
					'eventname',
					'sessiontype',
					'sessionstarttime',
					'sessionendtime',
					'attendancestatus',
					'note',
				].sort(),
			);
			expect(r.contenttype).toBe('Live Learning');
			expect(r.sessionstarttime).toMatch(OFFSET);
			expect(r.sessionendtime > r.sessionstarttime).toBe(true);
			expect(r.note === null || typeof r.note === 'string').toBe(true);
		}
		const rich = await ctx.api.report('attendance', {
			contentId: plain[0].contentid,
			userFields: true,
			contentFields: true,
			sessionFields: true,
		});
		expect(rich.length).toBeGreaterThan(0);
		expect(rich.every((r) => r.contentid === plain[0].contentid)).toBe(true);
		expect(rich[0]).toMatchObject({
			userdata: expect.any(Object),
			contentdata: expect.objectContaining({ 'Internal code': '' }),
			sessiondata: expect.objectContaining({ Instructor: expect.any(String) }),
		});
	});
});

describe('content (operation 4)', () => {
	it('content records with every field; contentType (case-insensitive) and contentId filter', async () => {
		const all = await ctx.api.report('content');
		expect(new Set(all.map((c) => c.contenttype))).toEqual(
			new Set(['Course', 'Live Learning', 'Video', 'Resource']),
		);
		expect(all.filter((c) => c.contenttype === 'Course').length).toBe(30);
		const c = all.find((x) => x.contentid === 101);
		expect(c).toEqual({
			fullname: 'Data Protection Essentials',
			contentid: 101,
			contenttype: 'Course',
			description: expect.stringContaining('<'),
			summary: expect.stringContaining('<'),
			totalenrolments: expect.any(Number),
			totalcompletions: expect.any(Number),
			status: expect.any(String),
			cost: expect.any(Number),
			duration: c.duration === null ? null : expect.any(Number),
			programs: expect.any(Array),
			category: c.category === null ? null : expect.any(String),
			tags: expect.any(Array),
			customfields: [
				{ name: 'Level', data: expect.any(String) },
				{ name: 'Accreditation body', data: expect.any(String) },
				{ name: 'Review date', data: expect.any(String) },
				{ name: 'Internal code', data: '' },
			],
			timecreated: expect.stringMatching(OFFSET),
			timemodified: expect.stringMatching(OFFSET),
			paymentCost: {
				finalCost: expect.any(Number),
				applicationId: expect.any(Number),
				discount: {
					success: expect.any(Boolean),
					errors: expect.any(String),
					discount: null,
					discountedPrice: expect.any(Number),
					originalPrice: expect.any(Number),
					discountedAmount: expect.any(Number),
					currency: expect.stringMatching(/^[A-Z]{3}$/),
				},
			},
		});
		expect(c.totalenrolments).toBeGreaterThanOrEqual(c.totalcompletions);
		expect(all.some((x) => x.duration === null) && all.some((x) => x.duration !== null)).toBe(true);
		const dates = all.flatMap((x) =>
			x.customfields
				.filter((f: any) => f.name === 'Review date' && f.data !== '')
				.map((f: any) => f.data),
		);
		expect(dates.length).toBeGreaterThan(0);
		for (const d of dates) expect(d).toMatch(OFFSET);
		const videos = await ctx.api.report('content', { contentType: 'Video' });
		expect(videos.length).toBe(12);
		expect(videos.every((x) => x.contenttype === 'Video')).toBe(true);
		const ll = await ctx.api.report('content', { contentType: 'live learning', contentId: 201 });
		expect(ll.map((x) => x.contentid)).toEqual([201]);
		expect((await get('content', { contentType: 'podcast' })).json).toMatchObject({
			status: 'Failed',
			errors: { contentType: [expect.stringContaining('live learning')] },
		});
	});
});
