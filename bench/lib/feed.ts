/**
 * The bare loop both feed rows compare the node with: GET a page of the completions feed with
 * undici, parse the JSON, keep every record, follow `next_cursor` until it is null. Nothing else
 * (no pacing, no retries, no items), so it is the HTTP and JSON cost the node cannot avoid.
 */
import { Agent, request } from 'undici';

/** the feed's largest page, which the node's walker uses */
export const FEED_PAGE = 500;
export const BENCH_USER_AGENT = 'n8n-nodes-learning-platform-bench';

export interface BareFeedResult {
	records: number;
	requests: number;
	ms: number;
}

/** The path of the tenancy's API under a sandbox URL (the feed is `${root}/completions`). */
export function tenancyRoot(sandboxUrl: string, tenancyId: string): string {
	return `${sandboxUrl}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${encodeURIComponent(tenancyId)}`;
}

export async function bareFeedLoop(
	root: string,
	apiKey: string,
	agent: Agent,
	options: { query?: Record<string, string>; maxPages?: number } = {},
): Promise<BareFeedResult> {
	const maxPages = options.maxPages ?? Infinity;
	const records: unknown[] = [];
	let cursor: string | null = null;
	let requests = 0;
	const t0 = performance.now();
	do {
		const qs = new URLSearchParams({ limit: String(FEED_PAGE), ...options.query });
		if (cursor) qs.set('cursor', cursor);
		const res = await request(`${root}/completions?${qs}`, {
			headers: {
				authorization: `Bearer ${apiKey}`,
				accept: 'application/json',
				'user-agent': BENCH_USER_AGENT,
			},
			dispatcher: agent,
		});
		requests++;
		if (res.statusCode !== 200)
			throw new Error(`bare loop: HTTP ${res.statusCode}: ${await res.body.text()}`);
		const page = (await res.body.json()) as { data: unknown[]; next_cursor: string | null };
		for (const record of page.data) records.push(record);
		cursor = page.next_cursor;
	} while (cursor && requests < maxPages);
	return { records: records.length, requests, ms: performance.now() - t0 };
}
