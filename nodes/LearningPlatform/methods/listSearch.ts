import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { friendlyEventName } from '../../shared/helpers';
import { listPage } from '../../shared/transport';

// Resource-locator searches: each call reads one page of the API's list and filters it by the
// typed text; the next page number is the pagination token, so scrolling loads the next page.

function pageToken(page: number | undefined): string | undefined {
	return page === undefined ? undefined : String(page);
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
	const { items, nextPage } = await listPage.call(this, '', page);
	const results = items
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
	return { results, paginationToken: pageToken(nextPage) };
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
	const { items, nextPage } = await listPage.call(this, `/${webhookId}/logs`, page);
	const results = items
		.filter((log) => matches(filter, log.id, log.event_type, log.status_code, log.created_at))
		.map((log) => ({
			name: `#${log.id} ${eventLabel(log.event_type)} · ${log.success ? 'delivered' : 'failed'}${
				log.status_code !== null && log.status_code !== undefined ? ` (${log.status_code})` : ''
			} · ${log.created_at ?? ''}`,
			value: String(log.id),
		}));
	return { results, paginationToken: pageToken(nextPage) };
}
