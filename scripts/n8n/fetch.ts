// fetch for requests to n8n, repeating the ones n8n refused while it held its database for lost.
// n8n 2.x pings its database every 2 s; a ping slower than DB_PING_TIMEOUT_MS marks the database
// disconnected, and until the next good ping an Express middleware placed before every route
// (REST, public API, webhooks, chat, MCP) answers 503 "Database is not ready!" without handling
// the request. Such a refusal is safe to repeat, whatever the method: nothing of it ran. The
// harness gives n8n a 30 s ping time-out (n8n.ts); this covers a machine slower than that.
//
// Writes go on a connection of their own. A kept-alive socket that n8n closes just as a request is
// sent on it fails the request ("other side closed"): a read is repeated (client.ts), a write
// cannot be, as n8n may have run it. Seen on activation under stress-ng (queue.test.ts, 2026-11-29).
import { Agent } from 'undici';
import { log } from './log';
import { scaled } from './slowness';

const REFUSAL = 'Database is not ready!';

/** No keep-alive: each request on a new connection. */
const writeAgent = new Agent({ pipelining: 0 });
const READS = new Set(['GET', 'HEAD']);

function describe(input: string | URL | Request): string {
	const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
	return new URL(url).pathname;
}

export async function fetchN8n(
	input: string | URL | Request,
	init?: RequestInit,
): Promise<Response> {
	const deadline = Date.now() + scaled(60_000);
	const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
	const sent = READS.has(method)
		? init
		: ({ ...init, dispatcher: writeAgent } as unknown as RequestInit);
	for (let attempt = 1; ; attempt++) {
		const response = await fetch(input, sent);
		if (response.status !== 503 || Date.now() >= deadline) return response;
		const text = await response.clone().text();
		if (!text.includes(REFUSAL)) return response;
		log(`n8n answered 503 "${REFUSAL}" to ${describe(input)} (attempt ${attempt}); again in 1 s`);
		await response.body?.cancel();
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
}
