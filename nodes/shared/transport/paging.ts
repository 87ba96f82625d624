// The one pager: `followPages` reads page after page from a start position until a page says
// there is no next one. The webhook API's paginated lists (subscriptions, delivery logs) follow
// page numbers with it (`page` and `perPage`, 100, the most the API allows, in; `data` and `meta`
// out; one stop rule for every caller), the completions feed its cursors (helpers/feed.ts).
import type { IDataObject } from 'n8n-workflow';

import type { LearningPlatformContext } from './context';
import { apiRequest, type ApiRequestOptions } from './request';

export const LIST_PAGE_SIZE = 100;

export interface ListPage {
	items: IDataObject[];
	/** the page after this one, or undefined when this is the last */
	nextPage: number | undefined;
	/** the list's last page, when the API says (`meta.last_page`) */
	lastPage: number | undefined;
}

interface ListEnvelope {
	data?: unknown;
	meta?: IDataObject;
}

/**
 * Where a list continues: `meta.last_page` when given, else `meta.next`, else a full page is taken
 * to mean more may follow. An empty page always ends the list.
 */
export function nextPageOf(
	envelope: ListEnvelope,
	page: number,
	received: number,
): number | undefined {
	if (received === 0) return undefined;
	const meta = envelope.meta ?? {};
	const lastPage = Number(meta.last_page);
	const currentPage = Number(meta.current_page ?? page);
	if (Number.isFinite(lastPage)) return currentPage < lastPage ? currentPage + 1 : undefined;
	if (meta.next !== null && meta.next !== undefined) return page + 1;
	return received < LIST_PAGE_SIZE ? undefined : page + 1;
}

type ListOptions = Pick<
	ApiRequestOptions,
	'qs' | 'itemIndex' | 'notFoundMessage' | 'notFoundDescription'
>;

/** One page of a list under the webhook root (`path` '' for subscriptions, `/<id>/logs` for logs). */
export async function listPage(
	this: LearningPlatformContext,
	path: string,
	page: number,
	options: ListOptions = {},
): Promise<ListPage> {
	const envelope = (await apiRequest.call(this, 'GET', 'webhook', path, {
		...options,
		qs: { ...(options.qs ?? {}), page, perPage: LIST_PAGE_SIZE },
	})) as ListEnvelope;
	const items = (Array.isArray(envelope?.data) ? envelope.data : []) as IDataObject[];
	const lastPage = Number(envelope?.meta?.last_page);
	return {
		items,
		nextPage: nextPageOf(envelope ?? {}, page, items.length),
		lastPage: Number.isInteger(lastPage) && lastPage > 0 ? lastPage : undefined,
	};
}

/**
 * Reads pages from `start`: `readPage` reads the page at a position and returns where the next
 * one starts, or undefined when the read is over.
 */
export async function followPages<Position>(
	start: Position,
	readPage: (position: Position) => Promise<Position | undefined>,
): Promise<void> {
	for (let position: Position | undefined = start; position !== undefined; ) {
		position = await readPage(position);
	}
}

/**
 * Reads pages until `stop` says so (given each page's items) or the list ends. No hidden page cap:
 * the list's own end is the only limit besides the caller's.
 */
export async function readList(
	this: LearningPlatformContext,
	path: string,
	stop: (items: IDataObject[]) => boolean,
	options: ListOptions = {},
): Promise<void> {
	await followPages(1, async (page: number) => {
		const result = await listPage.call(this, path, page, options);
		return stop(result.items) ? undefined : result.nextPage;
	});
}

/** All items of a list, or the first `limit` of them. */
export async function listAll(
	this: LearningPlatformContext,
	path: string,
	options: ListOptions & { limit?: number } = {},
): Promise<IDataObject[]> {
	const items: IDataObject[] = [];
	const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
	await readList.call(
		this,
		path,
		(page: IDataObject[]) => {
			// one by one: a long list spread into push() overflows the call stack
			for (const item of page) if (items.length < limit) items.push(item);
			return items.length >= limit;
		},
		options,
	);
	return items;
}
