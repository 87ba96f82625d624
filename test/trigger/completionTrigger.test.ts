/**
 * The completions polling trigger against the sandbox's feed, through n8n-core's real
 * PollContext: several polls with changes in between, the re-read of the resume page, a record
 * changed mid-walk, a rejected cursor, restarts from saved static data, filters and manual runs.
 *
 * The feed is tenancy-wide, so each test starts its own position and only counts what changed
 * after it (or filters on its own content); tests in this file run one after another.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IDataObject } from 'n8n-workflow';
import { request } from 'undici';

import { LearningPlatformCompletionTrigger } from '../../nodes/LearningPlatformCompletionTrigger/LearningPlatformCompletionTrigger.node';
import { runPoll, CredentialStore } from '../support/n8n';
import { setUpTriggerTests, type TriggerTestContext } from './setup';

jest.setTimeout(120_000);

const NODE_KEY = 'node:Learning Platform Completion Trigger';
const trigger = new LearningPlatformCompletionTrigger();
let t: TriggerTestContext;
let courses: number[];
let learners: number[];

beforeAll(async () => {
	t = await setUpTriggerTests('completion');
	const demo = await t.sandbox.control.demo();
	courses = demo.content.filter((c) => c.contenttype === 'Course' && !c.deleted).map((c) => c.id);
	learners = demo.users.filter((u) => !u.deleted && !u.suspended).map((u) => u.id);
});
afterAll(async () => await t.close());

async function poll(
	parameters: IDataObject,
	staticData: IDataObject,
	options: { mode?: 'trigger' | 'manual'; credentials?: CredentialStore } = {},
) {
	const { items } = await runPoll(trigger, {
		// full records (Simplify off) unless a test sets it; Simplify has test/node/simplify.test.ts
		parameters: { simple: false, ...parameters },
		credentials: options.credentials ?? t.credentials,
		staticData,
		mode: options.mode ?? 'trigger',
	});
	return (items?.[0] ?? []).map((item) => item.json);
}

function state(staticData: IDataObject): IDataObject {
	return ((staticData[NODE_KEY] as IDataObject | undefined)?.feed ?? {}) as IDataObject;
}

/** What n8n would load after a restart: the saved JSON. */
const reload = (staticData: IDataObject): IDataObject =>
	JSON.parse(JSON.stringify(staticData)) as IDataObject;

/** Moves the sandbox clock on so the next change gets a later `lastupdated` second. */
async function nextSecond() {
	await t.sandbox.control.advanceClock(1500);
}

let pick = 0;
/** A new completion of a course by a learner (distinct pairs, so each makes a new record). */
async function complete(
	overrides: { contentId?: number; userId?: number; completionstatus?: string } = {},
) {
	pick++;
	const { completion } = await t.sandbox.control.simulateCompletion({
		contentId: courses[pick % courses.length],
		userId: learners[(pick * 7) % learners.length],
		...overrides,
	});
	return completion;
}

const idsOf = (records: Array<Record<string, unknown>>) =>
	records.map((r) => r.completionid as number);

async function feedRequests(username = t.username) {
	return (await t.sandbox.control.requests({ username, path: '/completions' })).filter(
		(r) => r.status !== null,
	);
}

describe('polling from now', () => {
	test('the first poll emits nothing and records the start; later polls emit each change once', async () => {
		const staticData: IDataObject = {};
		expect(await poll({}, staticData)).toEqual([]);
		const started = state(staticData);
		expect(started.since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
		expect(started.cursor).toBeNull();

		await nextSecond();
		const created = [await complete(), await complete(), await complete()];
		const first = await poll({}, staticData);
		expect(idsOf(first).sort()).toEqual(idsOf(created).sort());
		// records as the feed returns them (Z form lastupdated, +00:00 times untouched)
		expect(first.find((r) => r.completionid === created[0].completionid)).toEqual(created[0]);

		expect(await poll({}, staticData)).toEqual([]);

		await nextSecond();
		const { completion: changed } = await t.sandbox.control.simulateRecordChange(
			created[1].completionid,
		);
		const second = await poll({}, staticData);
		expect(second).toEqual([changed]);
		expect(second[0].comment).toMatch(/^Record updated/);

		await nextSecond();
		const { completion: changedAgain } = await t.sandbox.control.simulateRecordChange(
			created[1].completionid,
		);
		expect(await poll({}, staticData)).toEqual([changedAgain]);
		expect(await poll({}, staticData)).toEqual([]);
	});

	test('a restart (static data reloaded from its saved JSON) resumes without loss or duplicates', async () => {
		let saved = reload({});
		let live = saved;
		const emitted: number[] = [];
		const run = async () => {
			live = reload(saved);
			const records = await poll({}, live);
			emitted.push(...idsOf(records));
			// n8n saves static data when a poll emits (and after activation)
			if (records.length > 0 || Object.keys(saved).length === 0) saved = reload(live);
			return records;
		};
		await run();

		await nextSecond();
		const batch1 = [await complete(), await complete()];
		expect(idsOf(await run()).sort()).toEqual(idsOf(batch1).sort());

		// a poll without items: its position is not saved; a restart goes back to the saved one
		expect(await run()).toEqual([]);
		await nextSecond();
		const batch2 = [await complete()];
		const { completion: batch1Changed } = await t.sandbox.control.simulateRecordChange(
			batch1[0].completionid,
		);
		expect(idsOf(await run()).sort()).toEqual(
			[batch2[0].completionid, batch1Changed.completionid].sort(),
		);
		expect(await run()).toEqual([]);

		expect(emitted.sort()).toEqual(
			[...idsOf(batch1), batch2[0].completionid, batch1Changed.completionid].sort(),
		);
	});

	test('a change that becomes visible late (feed visibility delay) is emitted once it appears', async () => {
		await t.sandbox.control.setConfig({ feedVisibilityDelayMs: 30_000 });
		try {
			const staticData: IDataObject = {};
			await poll({}, staticData);
			await nextSecond();
			const first = await complete();
			// not visible yet: nothing to emit, and nothing skipped either
			expect(await poll({}, staticData)).toEqual([]);
			await t.sandbox.control.advanceClock(31_000);
			const second = await complete();
			expect(idsOf(await poll({}, staticData))).toEqual([first.completionid]);
			await t.sandbox.control.advanceClock(31_000);
			expect(idsOf(await poll({}, staticData))).toEqual([second.completionid]);
			expect(await poll({}, staticData)).toEqual([]);
		} finally {
			await t.sandbox.control.setConfig({ feedVisibilityDelayMs: 0 });
		}
	});

	test('a manual run returns a sample of the newest records and leaves the stored position alone', async () => {
		const staticData: IDataObject = {};
		await poll({}, staticData);
		const before = reload(staticData);

		await nextSecond();
		const newest = [await complete(), await complete()];
		const sample = await poll({}, staticData, { mode: 'manual' });
		expect(sample.length).toBeGreaterThanOrEqual(2);
		expect(sample.length).toBeLessThanOrEqual(10);
		expect(idsOf(sample.slice(-2))).toEqual(idsOf(newest));
		expect(staticData).toEqual(before);

		// a manual run without any stored state stores none
		const untouched: IDataObject = {};
		expect((await poll({}, untouched, { mode: 'manual' })).length).toBeGreaterThan(0);
		expect(untouched).toEqual({});

		// and the trigger still emits those records, once
		expect(idsOf(await poll({}, staticData)).sort()).toEqual(idsOf(newest).sort());
	});
});

describe('polling a large feed with a cursor', () => {
	let total: number;
	const fromBeginning = { startFrom: 'beginning' };

	test('from the beginning: every record once, in pages of 500; the re-read resume page emits nothing', async () => {
		const staticData: IDataObject = {};
		await t.sandbox.control.clearRequests();
		const all = await poll(fromBeginning, staticData);
		total = all.length;
		expect(total).toBeGreaterThan(1000);
		expect(new Set(idsOf(all)).size).toBe(total);

		const requests = await feedRequests();
		expect(requests.length).toBe(Math.ceil(total / 500));
		for (const r of requests) expect(r.query.limit).toBe('500');
		const cursor = state(staticData).cursor as string;
		expect(cursor).toEqual(expect.any(String));

		// next poll: from the stored cursor, re-reads the last page, emits nothing, keeps the cursor
		await t.sandbox.control.clearRequests();
		expect(await poll(fromBeginning, staticData)).toEqual([]);
		const again = await feedRequests();
		expect(again).toHaveLength(1);
		expect(again[0].query.cursor).toBe(cursor);
		expect(state(staticData).cursor).toBe(cursor);

		// an old record changes: it moves to the tail and is emitted, once
		await nextSecond();
		const oldId = all[10].completionid as number;
		const { completion } = await t.sandbox.control.simulateRecordChange(oldId);
		expect(await poll(fromBeginning, staticData)).toEqual([completion]);
		expect(await poll(fromBeginning, staticData)).toEqual([]);
	});

	test('a record changed mid-walk is emitted once, as its latest version', async () => {
		// a proxy in front of the sandbox changes a record of the first page while the walk goes on
		let changed: Record<string, unknown> | undefined;
		let changedId: number | undefined;
		const proxy = await startProxy(t.sandbox.url, async (path, body) => {
			if (!path.includes('/completions') || changedId !== undefined) return;
			const page = JSON.parse(body) as { data: IDataObject[]; next_cursor: string | null };
			if (!page.next_cursor) return;
			changedId = page.data[3].completionid as number;
			await nextSecond();
			changed = (await t.sandbox.control.simulateRecordChange(changedId)).completion;
		});
		try {
			const credentials = new CredentialStore({ ...t.credentials.data, baseUrl: proxy.url });
			const staticData: IDataObject = {};
			const all = await poll(fromBeginning, staticData, { credentials });
			// the credential rotated through the proxy: keep the shared store current
			t.credentials.replace({ ...credentials.data, baseUrl: t.sandbox.url });

			expect(changedId).toBeDefined();
			const copies = all.filter((r) => r.completionid === changedId);
			expect(copies).toEqual([changed]);
			expect(new Set(idsOf(all)).size).toBe(all.length);
			// the changed record came again at the tail: it is the newest record
			expect(all[all.length - 1]).toEqual(changed);
			expect(await poll(fromBeginning, staticData)).toEqual([]);
		} finally {
			await proxy.close();
		}
	});

	test('a rejected cursor restarts from the last known-good time without loss or duplicates', async () => {
		const staticData: IDataObject = {};
		await poll(fromBeginning, staticData);
		await nextSecond();
		const before = [await complete(), await complete()];
		expect(idsOf(await poll(fromBeginning, staticData)).sort()).toEqual(idsOf(before).sort());

		// the platform no longer knows the cursor (position beyond its newest one)
		const feed = state(staticData);
		feed.cursor = Buffer.from('v1:999999999').toString('base64url');
		await nextSecond();
		const after = [await complete(), await complete()];

		await t.sandbox.control.clearRequests();
		const restarted = await poll(fromBeginning, staticData);
		expect(idsOf(restarted).sort()).toEqual(idsOf(after).sort());

		const requests = await feedRequests();
		expect(requests[0].query.cursor).toBe(feed.cursor);
		// the restart asked by time, from the stored restart point
		expect(requests[1].query.cursor).toBeUndefined();
		expect(requests[1].query.updatedSince).toBe(feed.since);
		expect(state(staticData).cursor).not.toBe(feed.cursor);
		expect(await poll(fromBeginning, staticData)).toEqual([]);
	});

	test('a restart from the saved static data resumes from the stored cursor', async () => {
		const staticData: IDataObject = {};
		await poll(fromBeginning, staticData);
		const saved = reload(staticData);
		const cursor = state(saved).cursor;

		await nextSecond();
		const changes = [await complete(), await complete(), await complete()];
		await t.sandbox.control.clearRequests();
		const resumed = await poll(fromBeginning, saved);
		expect(idsOf(resumed).sort()).toEqual(idsOf(changes).sort());
		const requests = await feedRequests();
		expect(requests).toHaveLength(1);
		expect(requests[0].query.cursor).toBe(cursor);
	});
});

describe('polls that overlap', () => {
	test('a poll that starts while the previous one of the same trigger still runs emits nothing; each change is emitted once', async () => {
		const staticData: IDataObject = {};
		await poll({}, staticData);
		await nextSecond();
		const created = [await complete(), await complete()];
		// two polls at once, as n8n's cron starts them after the clock jumped forward (or a slow poll
		// and the next tick): both would read the same position
		const [first, second] = await Promise.all([poll({}, staticData), poll({}, staticData)]);
		expect(second).toEqual([]);
		expect(idsOf(first).sort()).toEqual(idsOf(created).sort());
		// the turn is given back: the next poll runs, and has nothing new
		expect(await poll({}, staticData)).toEqual([]);
		await nextSecond();
		const later = await complete();
		expect(idsOf(await poll({}, staticData))).toEqual([later.completionid]);
	});

	test('a poll that fails gives the turn back: the next one reads on', async () => {
		const staticData: IDataObject = {};
		await poll({}, staticData);
		const offline = new CredentialStore({ ...t.credentials.data, baseUrl: 'http://127.0.0.1:9' });
		await expect(poll({}, staticData, { credentials: offline })).rejects.toThrow();
		await nextSecond();
		const created = await complete();
		expect(idsOf(await poll({}, staticData))).toEqual([created.completionid]);
	});
});

describe('filters and start date', () => {
	test('content and status filters: server-side ones on every request, the status one applied in n8n', async () => {
		const contentId = courses[0];
		const parameters = {
			filters: { contentId, statuses: ['Completed'] },
			options: { includeEnrolments: true, userFields: true },
		};
		const staticData: IDataObject = {};
		await poll(parameters, staticData);
		await nextSecond();

		const inProgress = await complete({
			contentId,
			userId: learners[1],
			completionstatus: 'In Progress',
		});
		const done = await complete({ contentId, userId: learners[2], completionstatus: 'Completed' });
		await complete({ contentId: courses[1], userId: learners[3], completionstatus: 'Completed' });

		await t.sandbox.control.clearRequests();
		const emitted = await poll(parameters, staticData);
		expect(idsOf(emitted)).toEqual([done.completionid]);
		expect(emitted[0].userdata).toEqual(expect.any(Object));
		expect(emitted[0].contentid).toBe(contentId);
		for (const r of await feedRequests()) {
			expect(r.query).toMatchObject({
				contentId: String(contentId),
				includeEnrolments: 'true',
				userFields: 'true',
				limit: '500',
			});
		}

		// the in-progress record is not emitted later either; when it completes, it is
		expect(await poll(parameters, staticData)).toEqual([]);
		await nextSecond();
		const nowDone = await complete({
			contentId,
			userId: learners[1],
			completionstatus: 'Completed',
		});
		expect(nowDone.completionid).toBe(inProgress.completionid);
		expect(idsOf(await poll(parameters, staticData))).toEqual([inProgress.completionid]);
	});

	test('an invalid Content ID fails the poll (and so the activation) naming the field, instead of reading every record', async () => {
		await t.sandbox.control.clearRequests();
		for (const contentId of ['={{ "12a" }}', 'abc', -3, 2.5]) {
			await expect(poll({ filters: { contentId } }, {})).rejects.toThrow(
				/^"Content ID" must be a positive whole number, got "/,
			);
		}
		// refused before any request: nothing was read with a widened filter
		expect(await feedRequests()).toEqual([]);

		// 0 was the empty value of the field's first version: saved workflows keep reading all content
		await poll({ filters: { contentId: 0 } }, {});
		const [request] = await feedRequests();
		expect(request.query.contentId).toBeUndefined();
	});

	test('content type filter is sent in the API form', async () => {
		const staticData: IDataObject = {};
		await t.sandbox.control.clearRequests();
		await poll({ filters: { contentType: 'live learning' } }, staticData);
		const [first] = await feedRequests();
		expect(first.query.contentType).toBe('live learning');
	});

	test('a start date emits the records changed since then, then continues', async () => {
		await t.sandbox.control.advanceClock(60_000);
		const { iso } = await t.sandbox.control.getClock();
		await nextSecond();
		const changes = [await complete(), await complete()];
		const parameters = { startFrom: 'date', startDate: iso };
		const staticData: IDataObject = {};
		expect(idsOf(await poll(parameters, staticData)).sort()).toEqual(idsOf(changes).sort());
		expect(await poll(parameters, staticData)).toEqual([]);

		// changing the start date starts over from the new date
		const restarted = await poll({ ...parameters, startDate: changes[0].lastupdated }, staticData);
		expect(idsOf(restarted).sort()).toEqual(idsOf(changes).sort());
	});

	test('a start date given as an expression (new value each poll) does not restart the position', async () => {
		const parameters = {
			startFrom: 'date',
			startDate: '={{ $now.minus({ minutes: 1 }).toISO() }}',
		};
		const staticData: IDataObject = {};
		await poll(parameters, staticData);
		expect(state(staticData).origin).toBe('date:expression');
		await nextSecond();
		const change = await complete();
		expect(idsOf(await poll(parameters, staticData))).toEqual([change.completionid]);
		expect(await poll(parameters, staticData)).toEqual([]);
	});

	test('changed server-side filters continue by time with the new filters (the cursor holds no filters)', async () => {
		const staticData: IDataObject = {};
		await poll({ startFrom: 'beginning' }, staticData);
		expect(state(staticData).cursor).toEqual(expect.any(String));
		await nextSecond();
		const change = await complete({ contentId: courses[2] });
		await t.sandbox.control.clearRequests();
		const emitted = await poll(
			{ startFrom: 'beginning', filters: { contentId: courses[2] } },
			staticData,
		);
		expect(idsOf(emitted)).toEqual([change.completionid]);
		const [first] = await feedRequests();
		expect(first.query.cursor).toBeUndefined();
		expect(first.query.contentId).toBe(String(courses[2]));
	});

	test('an invalid start date fails the poll with a clear message', async () => {
		await expect(poll({ startFrom: 'date', startDate: 'next tuesday' }, {})).rejects.toThrow(
			/Start Date/,
		);
	});
});

describe('a first sync of a large tenancy', () => {
	// last in this file: it grows the shared feed past one poll's cap
	test('arrives over several polls of at most 10,000 records, without loss or duplicates', async () => {
		const parameters = { startFrom: 'beginning', options: { showSuspended: true } };
		const before = (await poll(parameters, {})).length;
		expect(before).toBeLessThan(10_000);
		const generated = 10_600 - before;
		await t.sandbox.control.generateFeed(generated);

		const staticData: IDataObject = {};
		const first = await poll(parameters, staticData);
		expect(first).toHaveLength(10_000);
		// the next poll after a restart, from the saved position
		const saved = reload(staticData);
		const second = await poll(parameters, saved);
		expect(second).toHaveLength(600);
		expect(await poll(parameters, saved)).toEqual([]);

		const ids = [...idsOf(first), ...idsOf(second)];
		expect(new Set(ids).size).toBe(before + generated);
	});
});

// ---------------------------------------------------------------------------------------------

/** A forwarding proxy that lets a test act after seeing a response, before the node gets it. */
async function startProxy(
	target: string,
	onResponse: (path: string, body: string) => Promise<void>,
): Promise<{ url: string; close(): Promise<void> }> {
	const readBody = async (req: IncomingMessage) => {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		return Buffer.concat(chunks);
	};
	const server: Server = createServer((req, res) => {
		void (async () => {
			const body = await readBody(req);
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers)) {
				if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
					headers[name] = value;
			}
			const upstream = await request(`${target}${req.url ?? ''}`, {
				method: (req.method ?? 'GET') as 'GET',
				headers,
				body: body.length > 0 ? body : undefined,
			});
			const text = await upstream.body.text();
			if (upstream.statusCode === 200) await onResponse(req.url ?? '', text);
			const responseHeaders: Record<string, string> = {};
			for (const [name, value] of Object.entries(upstream.headers)) {
				if (
					typeof value === 'string' &&
					!['content-length', 'transfer-encoding', 'connection'].includes(name)
				) {
					responseHeaders[name] = value;
				}
			}
			res.writeHead(upstream.statusCode, responseHeaders);
			res.end(text);
		})().catch((error: Error) => {
			res.writeHead(502);
			res.end(error.message);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		close: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
