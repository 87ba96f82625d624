/**
 * The 15-minute check looks at the newest page of the delivery log. The spec shows no order: a
 * platform listing oldest first has its newest entries on the last page, and a check of page 1
 * would look at the oldest ones for ever (issue 48, item 4).
 */
import type { IDataObject } from 'n8n-workflow';

import { newestLogPage } from '../../nodes/LearningPlatformTrigger/recovery/logReading';
import type { ListPage } from '../../nodes/shared/transport';

/** A log of `count` entries (ids 1..count, the newest `failed` ones failed), `perPage` a page. */
function logOf(count: number, perPage: number, order: 'oldest' | 'newest', failed: number) {
	const entries: IDataObject[] = Array.from({ length: count }, (_, i) => ({
		id: i + 1,
		success: i < count - failed,
	}));
	if (order === 'newest') entries.reverse();
	const lastPage = Math.ceil(count / perPage);
	const read: number[] = [];
	const readPage = async (number: number): Promise<ListPage> => {
		read.push(number);
		const items = entries.slice((number - 1) * perPage, number * perPage);
		return { items, lastPage, nextPage: number < lastPage ? number + 1 : undefined };
	};
	return { readPage, read };
}

const ids = (entries: Array<{ id: number }>) => entries.map((entry) => entry.id);

test('listed oldest first over 3 pages: the last page, where the newest failure is', async () => {
	const log = logOf(250, 100, 'oldest', 1);
	const newest = await newestLogPage(log.readPage);
	expect(log.read).toEqual([1, 3]);
	expect(ids(newest)).toEqual(Array.from({ length: 50 }, (_, i) => 201 + i));
	expect(newest.some((entry) => entry.success === false)).toBe(true);
});

test('listed newest first: page 1 alone', async () => {
	const log = logOf(250, 100, 'newest', 1);
	const newest = await newestLogPage(log.readPage);
	expect(log.read).toEqual([1]);
	expect(newest[0]).toMatchObject({ id: 250, success: false });
});

test('one page, either order: that page', async () => {
	for (const order of ['oldest', 'newest'] as const) {
		const log = logOf(40, 100, order, 0);
		expect(ids(await newestLogPage(log.readPage))).toHaveLength(40);
		expect(log.read).toEqual([1]);
	}
});
