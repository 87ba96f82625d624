/**
 * The harness's fetchN8n against a local HTTP server that answers as n8n does while its database
 * ping fails: a refusal ("Database is not ready!") is sent again, body and method unchanged; any
 * other 503 is the caller's.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchN8n } from '../../scripts/n8n/fetch';

const NOT_READY = JSON.stringify({ code: 503, message: 'Database is not ready!' });

interface Received {
	method: string;
	body: string;
}

let server: Server;
let url: string;
let received: Received[];
let answers: Array<{ status: number; body: string }>;

async function bodyOf(request: IncomingMessage): Promise<string> {
	let body = '';
	for await (const chunk of request) body += chunk;
	return body;
}

beforeAll(async () => {
	server = createServer((request, response) => {
		void bodyOf(request).then((body) => {
			received.push({ method: request.method!, body });
			const answer = answers.shift() ?? { status: 200, body: '{"ok":true}' };
			response.writeHead(answer.status, { 'content-type': 'application/json' });
			response.end(answer.body);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook/hook`;
});

afterAll(async () => {
	await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
	received = [];
	answers = [];
});

it('sends a refused POST again, the same body, until n8n takes it', async () => {
	answers = [
		{ status: 503, body: NOT_READY },
		{ status: 503, body: NOT_READY },
	];
	const response = await fetchN8n(url, { method: 'POST', body: '{"learner":7}' });

	expect(response.status).toBe(200);
	expect(await response.json()).toEqual({ ok: true });
	expect(received).toEqual([
		{ method: 'POST', body: '{"learner":7}' },
		{ method: 'POST', body: '{"learner":7}' },
		{ method: 'POST', body: '{"learner":7}' },
	]);
});

it('returns any other 503 at once, its body readable', async () => {
	answers = [{ status: 503, body: '{"message":"Service temporarily unavailable"}' }];
	const response = await fetchN8n(url, { method: 'POST', body: '{}' });

	expect(response.status).toBe(503);
	expect(await response.text()).toBe('{"message":"Service temporarily unavailable"}');
	expect(received).toHaveLength(1);
});
