import * as fs from 'node:fs';
import * as path from 'node:path';
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { LearningPlatform } from '../../nodes/LearningPlatform/LearningPlatform.node';
import { LearningPlatformCompletionTrigger } from '../../nodes/LearningPlatformCompletionTrigger/LearningPlatformCompletionTrigger.node';
import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import * as events from '../../nodes/shared/helpers/events';

/** The node's public interface: resource/operation values are what saved workflows depend on. */
const node = new LearningPlatform();
const { description } = node;
const nodeDir = path.join(__dirname, '../../nodes/LearningPlatform');

const PUBLIC_INTERFACE: Record<string, string[]> = {
	report: ['getActivityCompletions', 'getAttendance', 'getContent', 'getResult'],
	bookmark: ['create'],
	completion: ['getMany'],
	webhook: [
		'getEvents',
		'getMany',
		'get',
		'create',
		'update',
		'delete',
		'getLogs',
		'redispatch',
		'sendSample',
	],
};

function operationsOf(resource: string): INodePropertyOptions[] {
	const picker = description.properties.find(
		(p) => p.name === 'operation' && p.displayOptions?.show?.resource?.includes(resource),
	);
	return (picker?.options ?? []) as INodePropertyOptions[];
}

test('resources and operations are exactly the public interface the README documents (renaming one breaks saved workflows)', () => {
	const resource = description.properties.find((p) => p.name === 'resource')!;
	expect((resource.options as INodePropertyOptions[]).map((o) => o.value).sort()).toEqual(
		Object.keys(PUBLIC_INTERFACE).sort(),
	);
	for (const [name, operations] of Object.entries(PUBLIC_INTERFACE)) {
		expect(
			operationsOf(name)
				.map((o) => o.value)
				.sort(),
		).toEqual([...operations].sort());
	}
});

test('each node has one typeVersion: 1, the webhook trigger 2 (n8n evaluates an expression for every delivery to a webhook start node of typeVersion 1)', () => {
	expect(description.version).toBe(1);
	expect(new LearningPlatformCompletionTrigger().description.version).toBe(1);
	expect(new LearningPlatformTrigger().description.version).toBe(2);
	for (const node of [
		new LearningPlatform(),
		new LearningPlatformCompletionTrigger(),
		new LearningPlatformTrigger(),
	])
		expect(node.description.defaultVersion).toBeUndefined();
});

test('every operation has an action and a description a model can read', () => {
	for (const name of Object.keys(PUBLIC_INTERFACE)) {
		for (const operation of operationsOf(name)) {
			expect(operation.action).toMatch(/\w+ \w+/);
			expect(String(operation.description).length).toBeGreaterThan(20);
		}
	}
});

test('every field belongs to exactly one resource/operation and says what it is', () => {
	const fields = description.properties.filter(
		(p) => p.name !== 'resource' && p.name !== 'operation',
	);
	for (const field of fields) {
		const show = field.displayOptions?.show;
		expect(show?.resource).toHaveLength(1);
		expect(show?.operation).toHaveLength(1);
		// collections are labelled by their entries, each of which needs a description
		const described =
			field.type === 'collection'
				? ((field.options ?? []) as INodeProperties[])
				: field.type === 'notice'
					? []
					: [field];
		for (const entry of described)
			expect({ name: entry.name, described: (entry.description ?? '').length > 10 }).toEqual({
				name: entry.name,
				described: true,
			});
	}
});

test('secrets are password fields; the node is usable as a tool and documented', () => {
	const secrets: INodeProperties[] = [];
	for (const property of description.properties) {
		for (const option of (property.options ?? []) as INodeProperties[]) {
			if (option.name === 'signing_key' || option.name === 'auth_token') secrets.push(option);
		}
	}
	expect(secrets.length).toBe(4); // create and update, two each
	expect(secrets.every((secret) => secret.typeOptions?.password === true)).toBe(true);
	expect(description.usableAsTool).toBe(true);
	expect(description.documentationUrl).toMatch(/^https:\/\//);
	expect(description.credentials).toEqual([
		{ name: 'learningPlatformApi', required: true, testedBy: 'learningPlatformApiTest' },
	]);
	expect(typeof node.methods.credentialTest.learningPlatformApiTest).toBe('function');
});

test('icons and codex file exist and match the node', () => {
	expect(description.icon).toEqual({
		light: 'file:learningPlatform.svg',
		dark: 'file:learningPlatform.dark.svg',
	});
	for (const icon of ['learningPlatform.svg', 'learningPlatform.dark.svg']) {
		expect(fs.readFileSync(path.join(nodeDir, icon), 'utf8')).toMatch(
			/^<svg [^>]*viewBox="0 0 64 64"/,
		);
	}
	const codex = JSON.parse(
		fs.readFileSync(path.join(nodeDir, 'LearningPlatform.node.json'), 'utf8'),
	);
	expect(codex.node).toBe(`n8n-nodes-learning-platform.${description.name}`);
	expect(codex.resources.primaryDocumentation[0].url).toBe(description.documentationUrl);
});

test('node code uses no timers, console or process (n8n community-node rules)', () => {
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory() && entry.name !== 'transport') walk(full);
			else if (entry.name.endsWith('.ts')) files.push(full);
		}
	};
	walk(nodeDir);
	expect(files.length).toBeGreaterThan(20);
	for (const file of files) {
		const code = fs.readFileSync(file, 'utf8');
		expect({
			file,
			match: code.match(/\b(setTimeout|setInterval|console\.|process\.)/)?.[0],
		}).toEqual({ file, match: undefined });
	}
});

describe('the editor as a no-code user meets it', () => {
	const trigger = new LearningPlatformTrigger().description;

	test('the display-only labels keep their names (stored workflows), say so, and sit in the collections', () => {
		for (const [operation, collection] of [
			['create', 'additionalFields'],
			['update', 'updateFields'],
		]) {
			const field = description.properties.find(
				(p) => p.name === collection && p.displayOptions?.show?.operation?.includes(operation),
			)!;
			const options = field.options as INodeProperties[];
			const labels = options.filter(
				(o) => o.name === 'auth_type' || o.name === 'content_type_header',
			);
			expect(labels.map((o) => o.displayName).sort()).toEqual([
				'Auth Type Label (Display Only)',
				'Content Type Label (Display Only)',
			]);
			for (const label of labels) expect(label.description).toMatch(/changes nothing/);
		}
		// nothing at the top level of the operation that could send a default
		expect(
			description.properties.filter(
				(p) => p.name === 'auth_type' || p.name === 'content_type_header',
			),
		).toEqual([]);
	});

	test("the trigger's Event is a fixed list named 'Event' with one picker entry per event", () => {
		const event = trigger.properties.find((p: INodeProperties) => p.name === 'event')!;
		// n8n's node creator lists a trigger's actions from a property displayed as "Event"
		expect(event.displayName).toBe('Event');
		expect(event.typeOptions?.loadOptionsMethod).toBeUndefined();
		const options = event.options as INodePropertyOptions[];
		// the spec's events (section Events) as the API writes them, one backslash on the wire
		// (doubled in this source): the five wildcards, broadest first, then the 14 notification,
		// 5 user, 4 course and 1 quiz events in the spec's order
		expect(options.map((o) => o.value)).toEqual([
			'*',
			'Events\\Notifications\\*',
			'Events\\Users\\*',
			'Events\\Courses\\*',
			'Events\\Quiz\\*',
			'Events\\Notifications\\Duedate',
			'Events\\Notifications\\Refresher',
			'Events\\Notifications\\Attendance',
			'Events\\Notifications\\Session_changed',
			'Events\\Notifications\\Session_cancelled',
			'Events\\Notifications\\Expressed_interest',
			'Events\\Notifications\\Enrolment',
			'Events\\Notifications\\Account_Merge',
			'Events\\Notifications\\Session_reminder',
			'Events\\Notifications\\Session_registration',
			'Events\\Notifications\\Session_withdrawn',
			'Events\\Notifications\\Session_deny',
			'Events\\Notifications\\Instructor_assignment',
			'Events\\Notifications\\Instructor_unassignment',
			'Events\\Users\\Created',
			'Events\\Users\\Updated',
			'Events\\Users\\Deleted',
			'Events\\Users\\Tenancy_added',
			'Events\\Users\\Tenancy_removed',
			'Events\\Courses\\Completion_created',
			'Events\\Courses\\Completion_updated',
			'Events\\Courses\\Completion_deleted',
			'Events\\Courses\\Completion_archived',
			'Events\\Quiz\\Attempt_completed',
		]);
		expect(options.find((o) => o.value === 'Events\\Courses\\Completion_created')).toMatchObject({
			name: 'Course: Completion Created',
			action: 'On course completion created',
		});
		expect(options.find((o) => o.value === '*')?.action).toBe('On any event');
		expect(event.default).toBe('Events\\Courses\\Completion_created');
	});

	test('the canvas subtitle names the event for people', () => {
		expect(events.friendlyEventName('Events\\Courses\\Completion_created')).toBe(
			'Course completion created',
		);
		expect(events.friendlyEventName('Events\\Notifications\\Duedate')).toBe(
			'Due date notification',
		);
		expect(events.friendlyEventName('Events\\Users\\*')).toBe('Any user event');
		expect(events.friendlyEventName('Events\\Quiz\\Attempt_completed')).toBe(
			'Quiz attempt completed',
		);
		// the subtitle is an n8n expression over a literal map: evaluate it as n8n would
		const subtitle = String(trigger.subtitle);
		expect(subtitle.startsWith('={{') && subtitle.endsWith('}}')).toBe(true);
		const body = subtitle.slice(3, -2);
		const evaluate = (value: string) =>
			new Function('$parameter', `return ${body}`)({ event: value });
		expect(evaluate('Events\\Courses\\Completion_created')).toBe('Course completion created');
		expect(evaluate('Events\\New\\Thing')).toBe('Events\\New\\Thing');
	});

	test('the HTTPS advice is a quiet hint on the Event field, not a permanent warning notice', () => {
		expect(
			trigger.properties.filter(
				(p: INodeProperties) => p.type === 'notice' || p.type === 'callout',
			),
		).toEqual([]);
		const event = trigger.properties.find((p: INodeProperties) => p.name === 'event')!;
		expect(event.hint).toMatch(/Webhook URLs above start with https/);
	});
});
