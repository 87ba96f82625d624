/**
 * The polling trigger's position rules alone, with plain records: what a walk emits and what the
 * next poll needs to remember, including the re-read of the last page after the resume cursor.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	SEEN_LIMIT,
	VISIBILITY_MARGIN_SECONDS,
	advanceFeedState,
	initialFeedState,
	readFeedState,
	recordVersion,
	secondsBefore,
	writeFeedState,
	type FeedState,
	type WalkOutcome,
} from '../../nodes/LearningPlatformCompletionTrigger/feedState';

const PAGE = 500;
const options = { statuses: [] as string[], pageSize: PAGE };

function record(id: number, lastupdated: string, extra: IDataObject = {}): IDataObject {
	return { completionid: id, lastupdated, completionstatus: 'Completed', comment: null, ...extra };
}

function walk(records: IDataObject[], nextCursor: string | null): WalkOutcome {
	const newest = records.reduce<string | null>(
		(max, r) => (max === null || (r.lastupdated as string) > max ? (r.lastupdated as string) : max),
		null,
	);
	return { records, nextCursor, newestLastUpdated: newest };
}

const ids = (records: IDataObject[]) => records.map((r) => r.completionid);
const start = () => initialFeedState('2024-05-01T09:00:00Z', '[]', 'now');

describe('advanceFeedState', () => {
	test('records already emitted are skipped when the resume page is read again; new ones are emitted', () => {
		const a = record(1, '2024-05-01T09:00:01Z');
		const b = record(2, '2024-05-01T09:00:02Z');
		const first = advanceFeedState(start(), walk([a, b], 'c1'), options);
		expect(ids(first.emit)).toEqual([1, 2]);
		expect(first.next.cursor).toBe('c1');

		const c = record(3, '2024-05-01T09:00:03Z');
		const second = advanceFeedState(first.next, walk([a, b, c], 'c1'), options);
		expect(ids(second.emit)).toEqual([3]);

		const third = advanceFeedState(second.next, walk([a, b, c], 'c1'), options);
		expect(third.emit).toEqual([]);
	});

	test('a record that changed again is emitted again (new version), once', () => {
		const a1 = record(1, '2024-05-01T09:00:01Z');
		const b = record(2, '2024-05-01T09:00:02Z');
		const first = advanceFeedState(start(), walk([a1, b], 'c1'), options);
		const a2 = record(1, '2024-05-01T09:05:00Z', { comment: 'changed' });
		const second = advanceFeedState(first.next, walk([b, a2], 'c1'), options);
		expect(second.emit).toEqual([a2]);
		const third = advanceFeedState(second.next, walk([b, a2], 'c1'), options);
		expect(third.emit).toEqual([]);
	});

	test('two changes within the same second are different versions', () => {
		const a1 = record(1, '2024-05-01T09:00:01Z', { completionstatus: 'In Progress' });
		const a2 = record(1, '2024-05-01T09:00:01Z', { completionstatus: 'Completed' });
		expect(recordVersion(a1)).not.toBe(recordVersion(a2));
		const first = advanceFeedState(start(), walk([a1], null), options);
		const second = advanceFeedState(first.next, walk([a2], null), options);
		expect(second.emit).toEqual([a2]);
	});

	test('the version does not depend on key order', () => {
		expect(recordVersion({ a: 1, b: { c: 2, d: 3 } })).toBe(
			recordVersion({ b: { d: 3, c: 2 }, a: 1 }),
		);
	});

	test('the status filter drops records without emitting them later', () => {
		const inProgress = record(1, '2024-05-01T09:00:01Z', { completionstatus: 'In Progress' });
		const done = record(2, '2024-05-01T09:00:02Z');
		const statusOptions = { ...options, statuses: ['Completed'] };
		const first = advanceFeedState(start(), walk([inProgress, done], 'c1'), statusOptions);
		expect(first.emit).toEqual([done]);
		const second = advanceFeedState(first.next, walk([inProgress, done], 'c1'), statusOptions);
		expect(second.emit).toEqual([]);
		// once it is completed it is a new version, and passes
		const completed = {
			...inProgress,
			completionstatus: 'Completed',
			lastupdated: '2024-05-01T09:01:00Z',
		};
		const third = advanceFeedState(second.next, walk([done, completed], 'c1'), statusOptions);
		expect(third.emit).toEqual([completed]);
	});

	test('since trails the newest lastupdated by the visibility margin and never moves back', () => {
		const a = record(1, '2024-05-01T10:00:00Z');
		const first = advanceFeedState(start(), walk([a], null), options);
		expect(first.next.lastKnownGood).toBe('2024-05-01T10:00:00Z');
		expect(first.next.since).toBe(secondsBefore('2024-05-01T10:00:00Z', VISIBILITY_MARGIN_SECONDS));
		expect(first.next.since).toBe('2024-05-01T09:58:00Z');

		// a late-visible older record does not pull anything back
		const late = record(2, '2024-05-01T09:30:00Z');
		const second = advanceFeedState(first.next, walk([late], null), options);
		expect(second.emit).toEqual([late]);
		expect(second.next.since).toBe('2024-05-01T09:58:00Z');
		expect(second.next.lastKnownGood).toBe('2024-05-01T10:00:00Z');

		// nothing read: position unchanged
		const empty = advanceFeedState(second.next, walk([], null), options);
		expect(empty.next).toEqual(second.next);
	});

	test('starting from the beginning (since empty) works, and an empty first walk keeps the start', () => {
		const fromBeginning = initialFeedState('', '[]', 'beginning');
		const empty = advanceFeedState(fromBeginning, walk([], null), options);
		expect(empty.next.since).toBe('');
		expect(empty.next.lastKnownGood).toBeNull();
		const nowStart = advanceFeedState(start(), walk([], null), options);
		expect(nowStart.next.since).toBe('2024-05-01T09:00:00Z');
	});

	test('the resume page is remembered even when it is older than since (a quiet feed)', () => {
		const old = Array.from({ length: 3 }, (_, i) => record(i + 1, `2024-04-0${i + 1}T00:00:00Z`));
		const recent = record(10, '2024-05-01T12:00:00Z');
		const first = advanceFeedState(
			initialFeedState('', '[]', 'beginning'),
			walk([...old, recent], 'c9'),
			options,
		);
		expect(Object.keys(first.next.seen).sort()).toEqual(['1', '10', '2', '3']);
		// the whole page comes back after c9, nothing is emitted twice
		const second = advanceFeedState(first.next, walk([...old, recent], 'c9'), options);
		expect(second.emit).toEqual([]);
	});

	test('the resume page and the versions at or after since are kept; a rejected-cursor restart from since emits nothing twice', () => {
		const many = Array.from({ length: 50 }, (_, i) =>
			record(i + 1, `2024-05-01T10:${String(i).padStart(2, '0')}:00Z`),
		);
		const first = advanceFeedState(start(), walk(many, 'c1'), { ...options, pageSize: 5 });
		// since = 10:49 - 2 min = 10:47; versions kept: the resume page (last 5) and everything >= 10:47
		expect(first.next.since).toBe('2024-05-01T10:47:00Z');
		expect(
			Object.keys(first.next.seen)
				.map(Number)
				.sort((x, y) => x - y),
		).toEqual([46, 47, 48, 49, 50]);
		// restart from since (cursor rejected): the records >= since come back, none is emitted again
		const restarted = advanceFeedState(first.next, walk(many.slice(47), 'c2'), {
			...options,
			pageSize: 5,
		});
		expect(restarted.emit).toEqual([]);
	});

	test('the remembered versions are bounded, the resume page first', () => {
		const count = SEEN_LIMIT + 300;
		const records = Array.from({ length: count }, (_, i) => record(i + 1, '2024-05-01T10:00:00Z'));
		const result = advanceFeedState(start(), walk(records, 'c1'), options);
		const kept = Object.keys(result.next.seen).map(Number);
		expect(kept).toHaveLength(SEEN_LIMIT);
		for (let id = count - PAGE + 1; id <= count; id++)
			expect(result.next.seen[String(id)]).toBeDefined();
	});
});

describe('state in static data', () => {
	test('round-trips through JSON (n8n saves static data as JSON)', () => {
		const staticData: IDataObject = {};
		const state: FeedState = {
			...start(),
			cursor: 'abc',
			lastKnownGood: '2024-05-01T10:00:00Z',
			seen: { '1': '2024-05-01T10:00:00Z|0123456789abcdef' },
		};
		writeFeedState(staticData, state);
		const reloaded = JSON.parse(JSON.stringify(staticData)) as IDataObject;
		expect(readFeedState(reloaded)).toEqual(state);
	});

	test('unknown or damaged data counts as no state', () => {
		expect(readFeedState({})).toBeUndefined();
		expect(readFeedState({ feed: { version: 2 } })).toBeUndefined();
		expect(readFeedState({ feed: { version: 1, since: 5, seen: {} } })).toBeUndefined();
	});
});
