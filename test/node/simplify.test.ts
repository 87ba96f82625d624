/**
 * Simplify (node version 1.1 of the Learning Platform node and of the Completion Trigger): records
 * keep only a few fields when on; version 1 keeps its full output unless Simplify is switched on.
 * Runs the nodes through n8n-core against the sandbox, like the other node tests.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import * as getActivityCompletions from '../../nodes/LearningPlatform/actions/report/getActivityCompletions.operation';
import * as getAttendance from '../../nodes/LearningPlatform/actions/report/getAttendance.operation';
import * as getContent from '../../nodes/LearningPlatform/actions/report/getContent.operation';
import { COMPLETION_SIMPLIFIED_FIELDS } from '../../nodes/shared/helpers/feed';
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

/** Every simplified record is its full record cut down to the listed fields, in their order. */
function expectSimplified(
	simplified: IDataObject[],
	full: IDataObject[],
	fields: readonly string[],
) {
	expect(simplified.length).toBe(full.length);
	expect(simplified.length).toBeGreaterThan(0);
	simplified.forEach((record, i) => {
		expect(record).toEqual(simplifyRecord(full[i], fields));
		expect(Object.keys(record)).toEqual(fields.filter((f) => f in full[i]));
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

	test('both nodes are versions [1, 1.1], new nodes get 1.1', () => {
		for (const node of [new LearningPlatform(), new LearningPlatformCompletionTrigger()]) {
			expect(node.description.version).toEqual([1, 1.1]);
			expect(node.description.defaultVersion).toBe(1.1);
		}
	});

	test('Simplify: off by default on version 1, on from 1.1, on the four record operations and the trigger', () => {
		const { properties } = new LearningPlatform().description;
		for (const operation of ['getActivityCompletions', 'getAttendance', 'getContent', 'getMany']) {
			const entries = simplifyEntries(properties, operation);
			expect(entries.map((e) => [e.default, e.displayOptions?.show?.['@version']])).toEqual([
				[false, [1]],
				[true, [{ _cnd: { gte: 1.1 } }]],
			]);
			expect(entries.every((e) => e.type === 'boolean' && e.displayName === 'Simplify')).toBe(true);
		}
		// only those operations
		expect(simplifyEntries(properties).length).toBe(8);
		const trigger = simplifyEntries(new LearningPlatformCompletionTrigger().description.properties);
		expect(trigger.map((e) => e.default)).toEqual([false, true]);
	});

	test('the helper keeps the listed fields in order and omits absent ones', () => {
		expect(
			simplifyRecord(
				{ lastupdated: 'x', username: 'u', completionid: 1, userdata: {} },
				COMPLETION_SIMPLIFIED_FIELDS,
			),
		).toEqual({
			completionid: 1,
			username: 'u',
			lastupdated: 'x',
		});
		expect(
			Object.keys(
				simplifyRecord({ lastupdated: 'x', completionid: 1 }, COMPLETION_SIMPLIFIED_FIELDS),
			),
		).toEqual(['completionid', 'lastupdated']);
	});
});

describe('Completion → Get Many', () => {
	test('version 1 without the parameter (an existing workflow) outputs full records, as before', async () => {
		const v1 = await t.run(feed, { typeVersion: 1 });
		const full = await t.run({ ...feed, simple: false });
		expect(v1.error).toBeUndefined();
		expect(json(v1)).toEqual(json(full));
		expect([...keysOf(json(v1))]).toEqual(
			expect.arrayContaining(['userid', 'certificateid', 'timeenrolled', 'expiry']),
		);
	});

	test('version 1.1 by default, and version 1 with Simplify on: who, what, status, when', async () => {
		const full = json(await t.run({ ...feed, simple: false }));
		const v11 = json(await t.run(feed));
		const v1on = json(await t.run({ ...feed, simple: true }, { typeVersion: 1 }));
		expectSimplified(v11, full, COMPLETION_SIMPLIFIED_FIELDS);
		expect(v1on).toEqual(v11);
	});

	test('the sync state item is not simplified', async () => {
		const out = json(await t.run({ ...feed, options: { ...feed.options, outputSyncState: true } }));
		const last = out[out.length - 1];
		expect(Object.keys(last)).toEqual(['syncState']);
		expect(last.syncState).toMatchObject({ reached_end: true, records: out.length - 1 });
	});
});

describe('reports', () => {
	test('Get Content: full on version 1, simplified on 1.1', async () => {
		const parameters = { resource: 'report', operation: 'getContent' };
		const v1 = await t.run(parameters, { typeVersion: 1 });
		expect(v1.error).toBeUndefined();
		expect(json(v1)).toEqual(json(await t.run({ ...parameters, simple: false })));
		expectSimplified(json(await t.run(parameters)), json(v1), getContent.report.simplifiedFields);
	});

	test('Get Activity Completions and Get Attendance: simplified on 1.1', async () => {
		const activity = {
			resource: 'report',
			operation: 'getActivityCompletions',
			contentId: String(courseId),
		};
		expectSimplified(
			json(await t.run(activity)),
			json(await t.run(activity, { typeVersion: 1 })),
			getActivityCompletions.report.simplifiedFields,
		);
		const attendance = {
			resource: 'report',
			operation: 'getAttendance',
			filters: { contentId: String(liveLearningId) },
		};
		expectSimplified(
			json(await t.run(attendance)),
			json(await t.run(attendance, { typeVersion: 1 })),
			getAttendance.report.simplifiedFields,
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
	const poll = async (parameters: IDataObject, typeVersion?: number) => {
		const { items } = await runPoll(new LearningPlatformCompletionTrigger(), {
			parameters: { startFrom: 'beginning', options: { showSuspended: true }, ...parameters },
			credentials: t.credentials,
			staticData: {},
			typeVersion,
		});
		return (items?.[0] ?? []).map((item) => item.json);
	};

	test('version 1 emits full records as before; 1.1 emits simplified ones', async () => {
		const v1 = await poll({}, 1);
		expect(v1).toEqual(await poll({ simple: false }));
		expectSimplified(await poll({}), v1, COMPLETION_SIMPLIFIED_FIELDS);
	});
});
