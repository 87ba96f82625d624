/**
 * Simplify (the Learning Platform node and the Completion Trigger): records keep only a few fields
 * when on, as by default; off, they are output as the API sends them.
 * Runs the nodes through n8n-core against the sandbox, like the other node tests.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { simplifyRecord } from '../../nodes/shared/helpers/simplify';
import { LearningPlatform } from '../../nodes/LearningPlatform/LearningPlatform.node';
import { LearningPlatformCompletionTrigger } from '../../nodes/LearningPlatformCompletionTrigger/LearningPlatformCompletionTrigger.node';
import { runPoll } from '../support/n8n';
import { json, setUpNodeTests, type NodeTestContext } from './setup';

let t: NodeTestContext;
let courseId: number;
let liveLearningId: number;

beforeAll(async () => {
	t = await setUpNodeTests('simplify');
	const demo = await t.sandbox.control.demo();
	courseId = demo.content.find((c) => c.contenttype === 'Course' && !c.deleted)!.id;
	liveLearningId = demo.content.find((c) => c.contenttype === 'Live Learning' && !c.deleted)!.id;
});
afterAll(async () => await t.close());

const feed = {
	resource: 'completion',
	operation: 'getMany',
	returnAll: true,
	options: { showSuspended: true },
};
const keysOf = (records: IDataObject[]) => new Set(records.flatMap((r) => Object.keys(r)));

/**
 * The fields a simplified record keeps, in their order: what users see by default (and what the
 * README and the tool descriptions name), written out here so that a changed list fails a test.
 */
const COMPLETION_FIELDS = [
	'completionid',
	'username',
	'contentid',
	'contentname',
	'contenttype',
	'completionstatus',
	'timecompleted',
	'lastupdated',
];
const CONTENT_FIELDS = [
	'contentid',
	'fullname',
	'contenttype',
	'status',
	'totalenrolments',
	'totalcompletions',
	'timemodified',
];
const ACTIVITY_COMPLETION_FIELDS = [
	'username',
	'contentid',
	'contentname',
	'activityid',
	'activityname',
	'activitycompletionstatus',
	'activitytimecompleted',
];
const ATTENDANCE_FIELDS = [
	'username',
	'contentid',
	'contentname',
	'sessionid',
	'eventname',
	'sessionstarttime',
	'attendancestatus',
];

/**
 * Every simplified record is its full record cut down to exactly `fields`, in that order, each
 * value as the full record has it; the full records had more.
 */
function expectSimplified(simplified: IDataObject[], full: IDataObject[], fields: string[]) {
	expect(simplified.length).toBe(full.length);
	expect(simplified.length).toBeGreaterThan(0);
	simplified.forEach((record, i) => {
		expect(Object.keys(record)).toEqual(fields);
		expect(record).toEqual(Object.fromEntries(fields.map((field) => [field, full[i][field]])));
	});
	expect(Object.keys(full[0]).length).toBeGreaterThan(fields.length);
}

describe('description', () => {
	const simplifyEntries = (properties: INodeProperties[], operation?: string) =>
		properties.filter(
			(p) =>
				p.name === 'simple' &&
				(operation === undefined || p.displayOptions?.show?.operation?.includes(operation)),
		);

	test('Simplify: one field, on by default, on the four record operations and the trigger', () => {
		const { properties } = new LearningPlatform().description;
		for (const operation of ['getActivityCompletions', 'getAttendance', 'getContent', 'getMany']) {
			const entries = simplifyEntries(properties, operation);
			expect(entries).toHaveLength(1);
			expect(entries[0]).toMatchObject({ type: 'boolean', displayName: 'Simplify', default: true });
		}
		// only those operations
		expect(simplifyEntries(properties).length).toBe(4);
		const trigger = simplifyEntries(new LearningPlatformCompletionTrigger().description.properties);
		expect(trigger.map((e) => e.default)).toEqual([true]);
	});

	test('the helper keeps the listed fields in order and omits absent ones', () => {
		expect(
			simplifyRecord(
				{ lastupdated: 'x', username: 'u', completionid: 1, userdata: {} },
				COMPLETION_FIELDS,
			),
		).toEqual({
			completionid: 1,
			username: 'u',
			lastupdated: 'x',
		});
		expect(
			Object.keys(simplifyRecord({ lastupdated: 'x', completionid: 1 }, COMPLETION_FIELDS)),
		).toEqual(['completionid', 'lastupdated']);
	});
});

describe('Completion → Get Many', () => {
	test('Simplify off outputs full records', async () => {
		const full = await t.run({ ...feed, simple: false });
		expect(full.error).toBeUndefined();
		expect([...keysOf(json(full))]).toEqual(
			expect.arrayContaining(['userid', 'certificateid', 'timeenrolled', 'expiry']),
		);
	});

	test('by default, as with Simplify on: who, what, status, when', async () => {
		const full = json(await t.run({ ...feed, simple: false }));
		const byDefault = json(await t.run(feed));
		expectSimplified(byDefault, full, COMPLETION_FIELDS);
		expect(json(await t.run({ ...feed, simple: true }))).toEqual(byDefault);
	});

	test('the sync state item is not simplified', async () => {
		const out = json(await t.run({ ...feed, options: { ...feed.options, outputSyncState: true } }));
		const last = out[out.length - 1];
		expect(Object.keys(last)).toEqual(['syncState']);
		expect(last.syncState).toMatchObject({ reached_end: true, records: out.length - 1 });
	});
});

describe('reports', () => {
	test('Get Content: simplified by default, full with Simplify off', async () => {
		const parameters = { resource: 'report', operation: 'getContent' };
		const full = await t.run({ ...parameters, simple: false });
		expect(full.error).toBeUndefined();
		expectSimplified(json(await t.run(parameters)), json(full), CONTENT_FIELDS);
	});

	test('Get Activity Completions and Get Attendance: simplified by default', async () => {
		const activity = {
			resource: 'report',
			operation: 'getActivityCompletions',
			contentId: String(courseId),
		};
		expectSimplified(
			json(await t.run(activity)),
			json(await t.run({ ...activity, simple: false })),
			ACTIVITY_COMPLETION_FIELDS,
		);
		const attendance = {
			resource: 'report',
			operation: 'getAttendance',
			filters: { contentId: String(liveLearningId) },
		};
		expectSimplified(
			json(await t.run(attendance)),
			json(await t.run({ ...attendance, simple: false })),
			ATTENDANCE_FIELDS,
		);
	});

	test('not waiting: the {requestid, status} item passes through Simplify unchanged', async () => {
		const result = await t.run({
			resource: 'report',
			operation: 'getContent',
			options: { waitForResult: false },
		});
		expect(json(result)).toEqual([{ requestid: expect.any(Number), status: 'Processing' }]);
	});
});

describe('Completion Trigger', () => {
	const poll = async (parameters: IDataObject) => {
		const { items } = await runPoll(new LearningPlatformCompletionTrigger(), {
			parameters: { startFrom: 'beginning', options: { showSuspended: true }, ...parameters },
			credentials: t.credentials,
			staticData: {},
		});
		return (items?.[0] ?? []).map((item) => item.json);
	};

	test('emits simplified records by default, full ones with Simplify off', async () => {
		const full = await poll({ simple: false });
		expectSimplified(await poll({}), full, COMPLETION_FIELDS);
	});
});
