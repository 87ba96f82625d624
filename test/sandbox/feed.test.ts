import { startSandbox } from '../../sandbox';
import { Api, http, useSandbox } from './helpers';

const ctx = useSandbox();

const feed = (q: Record<string, string | number | boolean> = {}) =>
	ctx.api.get(`${ctx.api.r.report}/completions`, q);
const OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const ZFORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const ALL = { includeEnrolments: true, showNotCompleted: true, showSuspended: true };

describe('record shape', () => {
	let records: any[];
	beforeAll(async () => {
		records = (await ctx.api.walk({ limit: 500, ...ALL })).records;
	});

	it('walks a few thousand demo records, ordered by last change, oldest first, each once', () => {
		expect(records.length).toBeGreaterThan(2000);
		const ids = records.map((r) => r.completionid);
		expect(new Set(ids).size).toBe(ids.length);
		for (let i = 1; i < records.length; i++)
			expect(records[i].lastupdated >= records[i - 1].lastupdated).toBe(true);
	});

	it('has every field in the specified form', () => {
		const problems: string[] = [];
		const check = (ok: boolean, what: string, r: any) =>
			ok || problems.push(`${what}: ${JSON.stringify(r)}`);
		const KEYS = [
			'completionid',
			'userid',
			'username',
			'contentid',
			'contentname',
			'comment',
			'lastupdated',
			'timeenrolled',
			'timestarted',
			'timecompleted',
			'expiry',
			'contenttype',
			'completionstatus',
		];
		for (const r of records) {
			check(
				KEYS.every((k) => k in r),
				'keys',
				r,
			);
			check(ZFORM.test(r.lastupdated), 'lastupdated Z form', r);
			for (const f of ['timeenrolled', 'timestarted', 'timecompleted', 'expiry'])
				check(r[f] === '' || OFFSET.test(r[f]), `${f} +00:00 form or ''`, r);
			check(
				['Course', 'Live Learning', 'Video', 'Resource'].includes(r.contenttype),
				'contenttype',
				r,
			);
			// `Did Not Complete` only when the tenancy's feature is on (off by default)
			check(
				['Completed', 'In Progress', 'Enrolled', 'Archived', 'Viewed'].includes(r.completionstatus),
				'status',
				r,
			);
			// certificateid: key absent (not null) on Video and Resource
			if (r.contenttype === 'Video' || r.contenttype === 'Resource')
				check(!('certificateid' in r), 'certificateid absent', r);
			else check(typeof r.certificateid === 'string', 'certificateid string', r);
			check(!('userdata' in r) && !('contentdata' in r), 'no optional objects', r);
			check(
				Number.isInteger(r.completionid) &&
					Number.isInteger(r.userid) &&
					Number.isInteger(r.contentid),
				'integers',
				r,
			);
		}
		expect(problems.slice(0, 5)).toEqual([]);
		const types = new Set(records.map((r) => r.contenttype));
		expect(types.size).toBe(4);
		expect(records.some((r) => r.timestarted === '')).toBe(true);
		expect(records.some((r) => r.expiry !== '')).toBe(true);
		expect(new Set(records.map((r) => r.completionstatus)).size).toBe(5);
	});

	it('default page: 50 records, completed ones only; prev_page_url null', async () => {
		const res = await feed();
		expect(res.status).toBe(200);
		expect(res.json.status).toBe('Complete');
		expect(res.json.data).toHaveLength(50);
		expect(res.json.prev_page_url).toBeNull();
		expect(typeof res.json.next_cursor).toBe('string');
		const all = (await ctx.api.walk({ limit: 500 })).records;
		expect(new Set(all.map((r) => r.completionstatus))).toEqual(
			new Set(['Completed', 'Viewed', 'Archived']),
		);
	});

	it('includeEnrolments adds Course enrolments only; showNotCompleted adds Live Learning too', async () => {
		const inc = (await ctx.api.walk({ limit: 500, includeEnrolments: true })).records;
		const notDone = (r: any) =>
			r.completionstatus === 'Enrolled' || r.completionstatus === 'In Progress';
		expect(inc.filter(notDone).length).toBeGreaterThan(0);
		expect(new Set(inc.filter(notDone).map((r) => r.contenttype))).toEqual(new Set(['Course']));
		const snc = (await ctx.api.walk({ limit: 500, showNotCompleted: true })).records;
		expect(new Set(snc.filter(notDone).map((r) => r.contenttype))).toEqual(
			new Set(['Course', 'Live Learning']),
		);
	});

	it('suspended learners only with showSuspended', async () => {
		const demo = await ctx.sb.control.demo();
		const suspended = new Set(demo.users.filter((u) => u.suspended).map((u) => u.id));
		expect(suspended.size).toBeGreaterThan(0);
		const without = (await ctx.api.walk({ limit: 500, ...ALL, showSuspended: false })).records;
		expect(without.some((r) => suspended.has(r.userid))).toBe(false);
		expect(records.some((r) => suspended.has(r.userid))).toBe(true);
	});

	it('filters by contentType (case-insensitive) and contentId; adds userdata and contentdata', async () => {
		const ll = (
			await ctx.api.walk({
				limit: 500,
				contentType: 'LIVE Learning',
				userFields: true,
				contentFields: true,
			})
		).records;
		expect(ll.length).toBeGreaterThan(0);
		expect(new Set(ll.map((r) => r.contenttype))).toEqual(new Set(['Live Learning']));
		expect(ll[0].userdata).toEqual(
			expect.objectContaining({ Department: expect.any(String), 'Job title': expect.any(String) }),
		);
		expect(ll[0].contentdata).toEqual(
			expect.objectContaining({ Level: expect.any(String), 'Internal code': '' }),
		);
		const one = (await ctx.api.walk({ limit: 500, contentId: 101 })).records;
		expect(one.length).toBeGreaterThan(0);
		expect(new Set(one.map((r) => r.contentid))).toEqual(new Set([101]));
	});
});

describe('did-not-complete feature', () => {
	it('`Did Not Complete` records appear only when the tenancy feature is on', async () => {
		const off = (await ctx.api.walk({ limit: 500, ...ALL })).records;
		expect(off.some((r) => r.completionstatus === 'Did Not Complete')).toBe(false);
		await ctx.sb.control.setConfig({ didNotCompleteEnabled: true });
		try {
			const on = (await ctx.api.walk({ limit: 500, ...ALL })).records.filter(
				(r) => r.completionstatus === 'Did Not Complete',
			);
			expect(on.length).toBeGreaterThan(0);
			expect(new Set(on.map((r) => r.contenttype))).toEqual(new Set(['Live Learning']));
			expect(on.every((r) => r.timecompleted === '')).toBe(true);
		} finally {
			await ctx.sb.control.setConfig({ didNotCompleteEnabled: false });
		}
	});
});

describe('cursor rules', () => {
	it('next_cursor and next_page_url are null exactly when nothing lies beyond the page', async () => {
		const all = (await ctx.api.walk({ limit: 500, contentId: 102 })).records;
		const n = all.length;
		expect(n).toBeGreaterThan(3);
		// a page that exactly ends the data: null
		const exact = await feed({ contentId: 102, limit: n });
		expect(exact.json.data).toHaveLength(n);
		expect(exact.json.next_cursor).toBeNull();
		expect(exact.json.next_page_url).toBeNull();
		// one short: a cursor, and the next page holds exactly the last record and ends
		const short = await feed({ contentId: 102, limit: n - 1 });
		expect(short.json.next_cursor).not.toBeNull();
		const last = await http('GET', short.json.next_page_url, { token: ctx.api.apiKey });
		expect(last.json.data.map((r: any) => r.completionid)).toEqual([all[n - 1].completionid]);
		expect(last.json.next_cursor).toBeNull();
		expect(last.json.next_page_url).toBeNull();
	});

	it('next_page_url is absolute and repeats the full query with the new cursor', async () => {
		const q = {
			limit: 7,
			updatedSince: '2024-03-01T00:00:00Z',
			contentType: 'course',
			showSuspended: true,
			includeEnrolments: true,
			userFields: true,
		};
		const first = await feed(q);
		const u = new URL(first.json.next_page_url);
		expect(`${u.origin}${u.pathname}`).toBe(`${ctx.api.r.report}/completions`);
		const params = Object.fromEntries(u.searchParams);
		expect(params).toEqual({
			...Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)])),
			cursor: first.json.next_cursor,
		});
		// following it continues where the page ended, with the same filters
		const second = await http('GET', first.json.next_page_url, { token: ctx.api.apiKey });
		const third = await feed({ ...q, cursor: first.json.next_cursor });
		expect(second.json).toEqual(third.json);
		expect(second.json.data[0].lastupdated >= first.json.data[6].lastupdated).toBe(true);
		expect(second.json.data.every((r: any) => r.contenttype === 'Course' && r.userdata)).toBe(true);
	});

	it('the cursor is opaque and records position only (filters come from each request)', async () => {
		const first = await feed({ limit: 20, contentType: 'video' });
		const withOther = await feed({
			limit: 20,
			contentType: 'resource',
			cursor: first.json.next_cursor,
		});
		expect(withOther.json.status).toBe('Complete');
		expect(withOther.json.data.every((r: any) => r.contenttype === 'Resource')).toBe(true);
		expect(withOther.json.data[0].lastupdated >= first.json.data[19].lastupdated).toBe(true);
	});

	it('cursor and updatedSince intersect: the later position wins', async () => {
		const all = (await ctx.api.walk({ limit: 500 })).records;
		const early = await feed({ limit: 10 });
		const earlyCursor = early.json.next_cursor;
		const midTime = all[Math.floor(all.length / 2)].lastupdated;
		// cursor earlier than updatedSince -> updatedSince wins
		const a = await feed({ cursor: earlyCursor, updatedSince: midTime, limit: 5 });
		expect(a.json.data[0].lastupdated >= midTime).toBe(true);
		expect(a.json.data[0].completionid).toBe(
			all.find((r) => r.lastupdated >= midTime).completionid,
		);
		// cursor later than updatedSince -> cursor wins
		const late = await feed({ updatedSince: midTime, limit: 10 });
		const b = await feed({
			cursor: late.json.next_cursor,
			updatedSince: '2024-01-01T00:00:00Z',
			limit: 5,
		});
		const afterLate = all.findIndex((r) => r.completionid === late.json.data[9].completionid) + 1;
		expect(b.json.data.map((r: any) => r.completionid)).toEqual(
			all.slice(afterLate, afterLate + 5).map((r) => r.completionid),
		);
	});

	it('updatedSince keeps records changed at or after it', async () => {
		const all = (await ctx.api.walk({ limit: 500 })).records;
		const t = all[100].lastupdated;
		const since = (await ctx.api.walk({ limit: 500, updatedSince: t })).records;
		expect(since.every((r) => r.lastupdated >= t)).toBe(true);
		expect(since.length).toBe(all.filter((r) => r.lastupdated >= t).length);
	});
});

describe('validation failures (HTTP 200, status Failed, errors.<param> arrays)', () => {
	it.each([
		[{ updatedSince: '2024-01-01T00:00:00+00:00' }, 'updatedSince'],
		[{ updatedSince: '2024-01-01' }, 'updatedSince'],
		[{ updatedSince: '2024-01-01T00:00:00.000Z' }, 'updatedSince'],
		[{ updatedSince: '2024-02-30T00:00:00Z' }, 'updatedSince'],
		[{ limit: 501 }, 'limit'],
		[{ limit: 0 }, 'limit'],
		[{ limit: 'ten' }, 'limit'],
		[{ contentType: 'podcast' }, 'contentType'],
		[{ cursor: 'not-a-cursor' }, 'cursor'],
		[{ cursor: Buffer.from('v1:99999999').toString('base64url') }, 'cursor'],
	])('%j -> errors.%s', async (q, param) => {
		const res = await feed(q as Record<string, string>);
		expect(res.status).toBe(200);
		expect(res.json.status).toBe('Failed');
		expect(Object.keys(res.json.errors)).toEqual([param]);
		expect(Array.isArray(res.json.errors[param])).toBe(true);
		expect(typeof res.json.errors[param][0]).toBe('string');
		expect(res.json.data).toBeUndefined();
	});

	it('messages: limit at most 500; contentType lists the allowed values', async () => {
		expect((await feed({ limit: 501 })).json.errors.limit[0]).toMatch(/at most 500/);
		const ct = (await feed({ contentType: 'podcast' })).json.errors.contentType[0];
		for (const v of ['course', 'live learning', 'resource', 'video']) expect(ct).toContain(v);
	});

	it('reports every invalid parameter at once; 500 and 1 are valid limits', async () => {
		const res = await feed({ limit: 900, updatedSince: 'yesterday', contentType: 'x' });
		expect(Object.keys(res.json.errors).sort()).toEqual(['contentType', 'limit', 'updatedSince']);
		expect((await feed({ limit: 500 })).json.data).toHaveLength(500);
		expect((await feed({ limit: 1 })).json.data).toHaveLength(1);
	});
});

describe('changes while walking', () => {
	it('a record changed mid-walk moves to the unvisited tail and is delivered twice', async () => {
		const first = await feed({ limit: 50 });
		const moved = first.json.data[10];
		const ahead = (await feed({ limit: 50, cursor: first.json.next_cursor })).json.data[5];
		await ctx.sb.control.simulateRecordChange(moved.completionid);
		await ctx.sb.control.simulateRecordChange(ahead.completionid);
		const rest = [];
		let res = await http('GET', first.json.next_page_url, { token: ctx.api.apiKey });
		for (;;) {
			rest.push(...res.json.data);
			if (!res.json.next_page_url) break;
			res = await http('GET', res.json.next_page_url, { token: ctx.api.apiKey });
		}
		const seen = [...first.json.data, ...rest].map((r: any) => r.completionid);
		expect(seen.filter((id) => id === moved.completionid)).toHaveLength(2); // delivered twice
		expect(seen.filter((id) => id === ahead.completionid)).toHaveLength(1); // moved before it was reached: once
		const tail = rest.slice(-2);
		expect(tail.map((r: any) => r.completionid)).toEqual([moved.completionid, ahead.completionid]);
		expect(tail[0].lastupdated > moved.lastupdated).toBe(true);
		expect(tail[0].comment).not.toBe(moved.comment);
	});

	it('polling the last non-null cursor re-delivers the last page plus new changes; empty data when nothing lies after it', async () => {
		const own = await startSandbox({
			demoData: { users: 20, completions: 40 },
			rateLimitPerMinute: 10_000,
		});
		try {
			const a = await Api.login(own);
			const get = (q: Record<string, string | number>) => a.get(`${a.r.report}/completions`, q);
			const p1 = (await get({ limit: 10 })).json;
			const keep = p1.next_cursor;
			expect(keep).toEqual(expect.any(String));
			const p2 = (await get({ limit: 500, cursor: keep })).json;
			expect(p2.data.length).toBeGreaterThan(0);
			expect(p2.next_cursor).toBeNull();
			// polling the kept cursor: the same records again (consumers upsert), still the end
			expect((await get({ limit: 500, cursor: keep })).json).toEqual(p2);
			// a new change appears at the tail of the kept cursor's view
			const { completion } = await own.control.simulateCompletion({ userId: 3, contentId: 101 });
			const again = (await get({ limit: 500, cursor: keep })).json;
			expect(again.data.at(-1)).toEqual(completion);
			expect(again.data.slice(0, -1).map((r: any) => r.completionid)).toEqual(
				p2.data
					.map((r: any) => r.completionid)
					.filter((id: number) => id !== completion.completionid),
			);
			// a cursor just before the last record; the last record's user is deleted: nothing lies beyond -> empty data
			const total = p1.data.length + again.data.length;
			const beforeLast = (await get({ limit: total - 1 })).json;
			expect(beforeLast.next_cursor).toEqual(expect.any(String));
			await own.control.simulateUserDeletion(completion.userid);
			const empty = (await get({ cursor: beforeLast.next_cursor })).json;
			expect(empty).toEqual({
				status: 'Complete',
				data: [],
				next_cursor: null,
				next_page_url: null,
				prev_page_url: null,
			});
		} finally {
			await own.close();
		}
	});

	it('visibility delay: a change shows up after the delay, at the tail, and a cursor skips nothing', async () => {
		const own = await startSandbox({
			demoData: { users: 20, completions: 30 },
			rateLimitPerMinute: 10_000,
			feedVisibilityDelayMs: 60_000,
		});
		try {
			const a = await Api.login(own);
			const page = async (cursor?: string) =>
				(await a.get(`${a.r.report}/completions`, cursor ? { cursor, limit: 500 } : { limit: 500 }))
					.json;
			const base = await page();
			const lastSeen = base.data.at(-1).completionid;
			const cutoff = (await a.get(`${a.r.report}/completions`, { limit: base.data.length - 1 }))
				.json.next_cursor;
			const A = (await own.control.simulateCompletion({ userId: 3, contentId: 101 })).completion;
			expect((await page(cutoff)).data.map((r: any) => r.completionid)).toEqual([lastSeen]);
			await own.control.advanceClock(30_000);
			const B = (await own.control.simulateCompletion({ userId: 4, contentId: 102 })).completion;
			await own.control.advanceClock(31_000); // A visible (61 s), B not yet (31 s)
			const p1 = await page(cutoff);
			expect(p1.data.map((r: any) => r.completionid)).toEqual([lastSeen, A.completionid]);
			const afterA = (await a.get(`${a.r.report}/completions`, { limit: 1, cursor: cutoff })).json
				.next_cursor;
			// B's lastupdated is older than A's visibility, but it is still delivered after A's position
			await own.control.advanceClock(30_000);
			const p2 = await page(afterA);
			expect(p2.data.map((r: any) => r.completionid)).toEqual([A.completionid, B.completionid]);
			expect(p2.data[1].lastupdated).toBe(B.lastupdated);
		} finally {
			await own.close();
		}
	});

	it('re-enrolment archives the old record (same id) and creates a new id; deletions vanish silently', async () => {
		const all = (await ctx.api.walk({ limit: 500 })).records;
		const target = all.find(
			(r) => r.contenttype === 'Course' && r.completionstatus === 'Completed',
		);
		const { archived, created } = await ctx.sb.control.simulateReEnrolment(target.completionid);
		expect(archived).toMatchObject({
			completionid: target.completionid,
			completionstatus: 'Archived',
		});
		expect(created.completionid).not.toBe(target.completionid);
		expect(created).toMatchObject({
			userid: target.userid,
			contentid: target.contentid,
			completionstatus: 'Enrolled',
			timestarted: '',
			timecompleted: '',
		});
		const tail = (await feed({ updatedSince: archived.lastupdated, includeEnrolments: true })).json
			.data;
		expect(tail.map((r: any) => [r.completionid, r.completionstatus])).toEqual(
			expect.arrayContaining([
				[target.completionid, 'Archived'],
				[created.completionid, 'Enrolled'],
			]),
		);

		const victim = all[0].userid;
		const { removed } = await ctx.sb.control.simulateUserDeletion(victim);
		expect(removed.length).toBeGreaterThan(0);
		const gone = await ctx.sb.control.simulateContentDeletion(401);
		expect(gone.removed.length).toBeGreaterThan(0);
		const after = (await ctx.api.walk({ limit: 500, ...ALL })).records;
		expect(after.some((r) => r.userid === victim || r.contentid === 401)).toBe(false);
		expect(after.some((r) => removed.includes(r.completionid))).toBe(false);
	});
});
