import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { friendlyEventName } from '../helpers/events';
import { apiRequest } from '../transport';

/**
 * Resource-locator searches. Each call reads one page of the API's list (100 per page, the
 * most it allows) and filters it by the typed text; the page number is the pagination token,
 * so scrolling loads the next page.
 */

const PER_PAGE = 100;

interface ListPage {
	data?: IDataObject[];
	meta?: { current_page?: number; last_page?: number };
}

function nextPageToken(page: ListPage, current: number): string | undefined {
	const lastPage = Number(page.meta?.last_page ?? current);
	return current < lastPage ? String(current + 1) : undefined;
}

function matches(filter: string | undefined, ...texts: unknown[]): boolean {
	if (!filter) return true;
	const needle = filter.toLowerCase();
	return texts.some((text) =>
		String(text ?? '')
			.toLowerCase()
			.includes(needle),
	);
}

/** `Events\Courses\Completion_created` -> "Course completion created" */
function eventLabel(event: unknown): string {
	const name = String(event ?? '');
	return name === '' ? '(no event)' : friendlyEventName(name);
}

/** `https://hooks.example.com/a/b?x=1` -> `hooks.example.com/a/b` (the scheme is always https). */
export function hostAndPath(url: unknown): string {
	const text = String(url ?? '');
	try {
		const parsed = new URL(text);
		const path = parsed.pathname === '/' ? '' : parsed.pathname;
		return `${parsed.host}${path}`;
	} catch {
		return text;
	}
}

export async function searchWebhooks(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const page = Number(paginationToken ?? 1) || 1;
	const response = (await apiRequest.call(this, 'GET', 'webhook', '', {
		qs: { page, perPage: PER_PAGE },
	})) as ListPage;
	const results = (response.data ?? [])
		.filter((subscription) =>
			matches(
				filter,
				subscription.id,
				subscription.event,
				eventLabel(subscription.event),
				subscription.url,
			),
		)
		.map((subscription) => ({
			// what tells two subscriptions apart comes first, as the list cuts long names off at the end
			name: `#${subscription.id} · ${eventLabel(subscription.event)} · ${hostAndPath(subscription.url)}${
				subscription.is_enabled === false ? ' (disabled)' : ''
			}`,
			value: String(subscription.id),
		}));
	return { results, paginationToken: nextPageToken(response, page) };
}

export async function searchWebhookLogs(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const webhookId = String(
		this.getNodeParameter('webhookId', undefined, { extractValue: true }) ?? '',
	).trim();
	if (!/^\d+$/.test(webhookId)) return { results: [] };
	const page = Number(paginationToken ?? 1) || 1;
	const response = (await apiRequest.call(this, 'GET', 'webhook', `/${webhookId}/logs`, {
		qs: { page, perPage: PER_PAGE },
	})) as ListPage;
	const results = (response.data ?? [])
		.filter((log) => matches(filter, log.id, log.event_type, log.status_code, log.created_at))
		.map((log) => ({
			name: `#${log.id} ${eventLabel(log.event_type)} · ${log.success ? 'delivered' : 'failed'}${
				log.status_code !== null && log.status_code !== undefined ? ` (${log.status_code})` : ''
			} · ${log.created_at ?? ''}`,
			value: String(log.id),
		}));
	return { results, paginationToken: nextPageToken(response, page) };
}
