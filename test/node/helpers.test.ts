import type { INode } from 'n8n-workflow';
import { NodeOperationError, tryToParseDateTime } from 'n8n-workflow';

import { toFeedTimestamp } from '../../nodes/shared/helpers/dates';
import {
	ALL_EVENTS,
	CONCRETE_EVENTS,
	WILDCARD_EVENTS,
	eventMatches,
	staticEventOptions,
} from '../../nodes/shared/helpers/events';
import { maskSecret, maskSubscription } from '../../nodes/shared/helpers/masking';
import { COMPLETION_STATUSES } from '../../nodes/shared/helpers/feed';
import { ALL_EVENTS as SANDBOX_EVENTS } from '../../sandbox';
import { COMPLETION_STATUSES as SANDBOX_STATUSES } from '../../sandbox/types';

/** The pure helpers shared with the trigger nodes; the operations using them are tested through n8n. */

test("the completion statuses the trigger filters on are the simulator's, both from the spec", () => {
	expect([...COMPLETION_STATUSES].sort()).toEqual([...SANDBOX_STATUSES].sort());
});

describe('events', () => {
	test("the static list is the spec's: 24 events and 5 wildcards, as on the wire", () => {
		expect(CONCRETE_EVENTS).toHaveLength(24);
		expect(WILDCARD_EVENTS.map((e) => e.name)).toEqual([
			'*',
			'Events\\Notifications\\*',
			'Events\\Users\\*',
			'Events\\Courses\\*',
			'Events\\Quiz\\*',
		]);
		expect(ALL_EVENTS.map((e) => e.name).sort()).toEqual([...SANDBOX_EVENTS].sort());
		expect(CONCRETE_EVENTS.map((e) => e.name)).toContain('Events\\Notifications\\Account_Merge');
		expect(staticEventOptions()[0]).toEqual({
			name: 'All Events (*)',
			value: '*',
			description: '*',
		});
	});

	test.each([
		['*', 'Events\\Courses\\Completion_created', true],
		['Events\\Courses\\*', 'Events\\Courses\\Completion_created', true],
		['Events\\Courses\\*', 'Events\\Users\\Created', false],
		['Events\\Courses\\*', 'Events\\CoursesX\\Completion_created', false],
		['Events\\Courses\\Completion_created', 'Events\\Courses\\Completion_created', true],
		['Events\\Courses\\Completion_created', 'Events\\Courses\\Completion_updated', false],
		['Events\\Courses\\Completion_created', 'events\\courses\\completion_created', false],
	])('eventMatches(%s, %s) = %s', (subscribed, concrete, expected) => {
		expect(eventMatches(subscribed, concrete)).toBe(expected);
	});
});

describe('toFeedTimestamp', () => {
	const node: INode = {
		id: 'n1',
		name: 'Learning Platform',
		type: 'n8n-nodes-learning-platform.learningPlatform',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};

	test.each([
		['Z form', '2024-05-01T09:00:00Z', '2024-05-01T09:00:00Z'],
		['space separator, UTC zone', '2024-05-01 09:00:00 UTC', '2024-05-01T09:00:00Z'],
		['offset', '2024-05-01T11:30:00+02:30', '2024-05-01T09:00:00Z'],
		['fraction with comma', '2024-05-01T09:00:00,75Z', '2024-05-01T09:00:00Z'],
		['date only, UTC by default', '2024-05-01', '2024-05-01T00:00:00Z'],
		['epoch ms number', 1714554000123, '2024-05-01T09:00:00Z'],
		['epoch seconds number', 1714554000, '2024-05-01T09:00:00Z'],
		['JS Date', new Date('2024-05-01T09:00:00.900Z'), '2024-05-01T09:00:00Z'],
		['RFC 2822 with zone', 'Wed, 01 May 2024 09:00:00 GMT', '2024-05-01T09:00:00Z'],
		[
			'Luxon DateTime ($now)',
			tryToParseDateTime('2024-05-01T18:00:00+09:00'),
			'2024-05-01T09:00:00Z',
		],
		['epoch seconds as text', '1714554000', '2024-05-01T09:00:00Z'],
	])('%s', (_name, value, expected) => {
		expect(toFeedTimestamp(value, 'Since', { node })).toBe(expected);
	});

	test('wall-clock values follow the given zone, across daylight saving', () => {
		expect(
			toFeedTimestamp('2024-03-31T01:30:00', 'Since', { node, timezone: 'Europe/London' }),
		).toBe('2024-03-31T01:30:00Z');
		expect(
			toFeedTimestamp('2024-03-31T03:30:00', 'Since', { node, timezone: 'Europe/London' }),
		).toBe('2024-03-31T02:30:00Z');
		expect(
			toFeedTimestamp('2024-07-01T00:00:00', 'Since', { node, timezone: 'Asia/Kolkata' }),
		).toBe('2024-06-30T18:30:00Z');
		// an explicit offset wins over the zone
		expect(
			toFeedTimestamp('2024-07-01T00:00:00Z', 'Since', { node, timezone: 'Asia/Kolkata' }),
		).toBe('2024-07-01T00:00:00Z');
	});

	test.each([
		['empty', ''],
		['null', null],
		['words', 'last tuesday'],
		['zone-less non-ISO text', '05/01/2024 09:00'],
		['invalid Luxon', tryToParseDateTime('2024-05-01T09:00:00Z').setZone('Not/AZone')],
		['a day that does not exist', '2024-02-30'],
		['NaN', Number.NaN],
		['invalid Date', new Date('nope')],
		['boolean', true],
		['hour 24', '2024-05-01T24:00:00Z'],
	])('%s is refused with a NodeOperationError naming the field', (_name, value) => {
		let thrown: unknown;
		try {
			toFeedTimestamp(value, 'Updated Since', { node, itemIndex: 3 });
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(NodeOperationError);
		expect((thrown as NodeOperationError).message).toMatch(
			/^The value of "Updated Since" is not a date/,
		);
		expect((thrown as NodeOperationError).description).toContain('ISO 8601');
		expect((thrown as NodeOperationError).context.itemIndex).toBe(3);
	});
});

describe('secret masking of read outputs', () => {
	test('masks like the API; leaves masked values, null and other fields alone', () => {
		expect(maskSecret('abcdefgh1234')).toBe('\u2022'.repeat(8) + '1234');
		expect(maskSecret('\u2022'.repeat(8) + '1234')).toBe('\u2022'.repeat(8) + '1234');
		expect(
			maskSubscription({
				id: 1,
				signing_key: 'plain-secret-9999',
				auth_token: null,
				url: 'https://x',
			}),
		).toEqual({
			id: 1,
			signing_key: '\u2022'.repeat(8) + '9999',
			auth_token: null,
			url: 'https://x',
		});
	});
});
