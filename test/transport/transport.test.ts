/**
 * The transport through n8n's real execution path against the sandbox: headers, retries, error
 * messages, pagination, item indexes and secret hygiene. Pacing has its own file (it takes a
 * minute of real time).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { scrubObject, scrubSecrets } from '../../nodes/shared/transport/secrets';
import { failedStatusMessage } from '../../nodes/shared/transport/wording';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import type { CredentialStore } from '../support/n8n';
import { executeNode } from '../support/n8n';
import { newCredential, outputOf, probe, Secrets, type ProbePlan } from './helpers';

const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
	version: string;
};
const UA = `n8n-nodes-learning-platform/${pkg.version} (n8n)`;

let sb: SandboxHandle;
const secrets = new Secrets();
const errorTexts: string[] = [];
const stores: CredentialStore[] = [];

async function run(store: CredentialStore, plan: ProbePlan, items = [{ json: {} }]) {
	const result = await executeNode({ nodeType: probe(plan), credentials: store, items });
	if (result.error)
		errorTexts.push(
			JSON.stringify(result.error),
			result.error.message,
			String(result.error.description),
		);
	const out = outputOf(result);
	for (const r of out) if (r.error) errorTexts.push(r.error.dump);
	return { result, out };
}

async function credential(prefix: string) {
	const c = await newCredential(sb, prefix);
	secrets.add(c.refreshToken);
	stores.push(c.store);
	return c;
}

const get = (path: string, root: 'webhook' | 'report' | 'bookmark' = 'webhook', options = {}) => ({
	method: 'GET' as const,
	root,
	path,
	options,
});

beforeAll(async () => {
	sb = await startSandbox({
		quiet: true,
		rateLimitPerMinute: 6000,
		demoData: false,
		allowHttpWebhookUrls: true,
	});
});

afterAll(async () => {
	for (const s of stores) secrets.addStore(s);
	for (const sub of await sb.control.subscriptions()) secrets.add(sub.signing_key, sub.auth_token);
	expect(secrets.size).toBeGreaterThan(5);
	expect(errorTexts.length).toBeGreaterThan(5);
	expect(secrets.foundIn(errorTexts.join('\n'))).toEqual([]);
	await sb.close();
});

test('every request carries the package User-Agent and Accept: application/json; bodies are JSON', async () => {
	const { store, username } = await credential('t-ua');
	const { out } = await run(store, {
		calls: [
			get('/events'),
			get(''),
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/t-ua' } },
			},
			get('/999999'),
			get('/completions', 'report', { qs: { limit: 5 } }),
		],
	});
	expect(out.map((r) => r.ok)).toEqual([true, true, true, false, true]);
	const created = out[2].body as { id: number; url: string };
	expect(created.url).toBe('https://example.com/t-ua');
	const requests = await sb.control.requests({ username });
	expect(requests.length).toBeGreaterThanOrEqual(6);
	for (const r of requests) expect(r.user_agent).toBe(UA);
	expect(requests.map((r) => r.authorization_kind)).toContain('refresh');
});

test('fullResponse resolves status, headers and body', async () => {
	const { store } = await credential('t-full');
	const { out } = await run(store, {
		calls: [{ ...get('/events'), options: { fullResponse: true } }],
	});
	const full = out[0].body as {
		statusCode: number;
		headers: Record<string, string>;
		body: { events: string[] };
	};
	expect(full.statusCode).toBe(200);
	expect(full.headers['x-ratelimit-limit']).toBe('6000');
	expect(full.body.events).toContain('*');
});

test('HTTP 200 status "Failed": NodeApiError listing each field and its messages; returnFailed hands the body back', async () => {
	const { store } = await credential('t-failed');
	const bad = { updatedSince: '2024-01-01T00:00:00+00:00', limit: 501 };
	const { out } = await run(store, {
		calls: [
			get('/completions', 'report', { qs: bad }),
			get('/completions', 'report', { qs: bad, returnFailed: true }),
			get('/activitycompletions', 'report'),
		],
	});
	expect(out[0].ok).toBe(false);
	expect(out[0].error!.message).toMatch(
		/^The learning platform rejected the request: updatedSince: .+; limit: .*500/,
	);
	expect(out[1]).toMatchObject({
		ok: true,
		body: {
			status: 'Failed',
			errors: { updatedSince: expect.any(Array), limit: expect.any(Array) },
		},
	});
	expect(out[2].error!.message).toMatch(/userId or a contentId/i);
	expect(out[2].error!.message).not.toMatch(/exception:/);
});

test('failedStatusMessage formats fields and messages', () => {
	expect(
		failedStatusMessage({ updatedSince: ['must be Z form.', 'second.'], limit: ['at most 500.'] }),
	).toBe('updatedSince: must be Z form. second.; limit: at most 500.');
	expect(
		failedStatusMessage({ exception: 'Either a userId or contentId filter is required' }),
	).toBe('Either a userId or contentId filter is required');
	expect(failedStatusMessage({})).toMatch(/without details/);
});

test('422: the server message is in the error (duplicate event + url)', async () => {
	const { store } = await credential('t-422');
	const body = {
		event: 'Events\\Courses\\Completion_created',
		url: 'https://example.com/dup',
		signing_key: 'sk_test_signing_secret_422',
		auth_token: 'at_test_auth_token_422',
	};
	secrets.add(body.signing_key, body.auth_token);
	const { out } = await run(store, {
		calls: [
			{ method: 'POST', root: 'webhook', path: '', options: { body } },
			{ method: 'POST', root: 'webhook', path: '', options: { body } },
		],
	});
	expect(out[0].ok).toBe(true);
	expect(out[1].error!.httpCode).toBe('422');
	expect(out[1].error!.message).toMatch(
		/^The learning platform could not process the request \(422\): .*already exists/i,
	);
});

test('404 names the target and what to check; the item index is on the error', async () => {
	const { store } = await credential('t-404');
	const { out } = await run(store, { perItem: get('') }, [
		{ json: { path: '/events' } },
		{ json: { path: '/424242' } },
		{ json: { path: '/events' } },
	]);
	expect(out.map((r) => r.ok)).toEqual([true, false, true]);
	expect(out[1].error).toMatchObject({ httpCode: '404', itemIndex: 1 });
	expect(out[1].error!.message).toBe(
		`Not found (404): GET webhook API /424242 does not exist on tenancy '${sb.tenancyId}'`,
	);

	// thrown out of the node: n8n sees a NodeApiError with the item index
	const failed = await run(store, { perItem: get(''), throwErrors: true }, [
		{ json: { path: '/events' } },
		{ json: { path: '/424243' } },
	]);
	expect(failed.result.error?.name).toBe('NodeApiError');
	expect(failed.result.error?.context?.itemIndex).toBe(1);
});

test('5xx on GET: retried with back-off, then succeeds', async () => {
	const { store } = await credential('t-500');
	await run(store, { calls: [get('/events')] });
	await sb.control.setFaults({ kind: 'http500', count: 2, pathPattern: `/webhooks$` });
	const { out } = await run(store, { calls: [get('')] });
	expect(out[0].ok).toBe(true);
	const statuses = (await sb.control.requests({}))
		.filter((r) => r.path.endsWith('/webhooks') && r.method === 'GET')
		.slice(-3);
	expect(statuses.map((r) => r.status)).toEqual([500, 500, 200]);
});

test('POST is not retried on 5xx or a dropped connection (may have been processed), and says so', async () => {
	const { store } = await credential('t-post');
	await run(store, { calls: [get('/events')] });
	await sb.control.clearRequests();
	await sb.control.setFaults({ kind: 'http500', count: 1, method: 'POST' });
	const a = await run(store, {
		calls: [
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/p500' } },
			},
		],
	});
	expect(a.out[0].error!.message).toBe(
		'The learning platform failed to process the request (HTTP 500)',
	);
	expect(a.out[0].error!.description).toMatch(
		/not retried because the server may already have processed the POST/,
	);
	await sb.control.setFaults({ kind: 'drop', count: 1, method: 'POST' });
	const b = await run(store, {
		calls: [
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/pdrop' } },
			},
		],
	});
	expect(b.out[0].ok).toBe(false);
	expect(b.out[0].error!.description).toMatch(/was not retried/);
	// in the message itself: with Continue On Fail the description does not reach the output
	expect(b.out[0].error!.message).toMatch(
		/^Could not reach the learning platform at .*\. The POST may have been processed anyway: check before running it again$/,
	);
	await sb.control.clearFaults();
	const posts = (await sb.control.requests({})).filter((r) => r.method === 'POST');
	expect(posts).toHaveLength(2);
});

test('dropped connections on GET are retried', async () => {
	const { store } = await credential('t-drop');
	await run(store, { calls: [get('/events')] });
	await sb.control.setFaults({ kind: 'drop', count: 2, pathPattern: '/events$' });
	const { out } = await run(store, { calls: [get('/events')] });
	await sb.control.clearFaults();
	expect(out[0].ok).toBe(true);
});

test('429 waits for Retry-After and retries (GET and POST), never failing the item', async () => {
	const { store } = await credential('t-429');
	await run(store, { calls: [get('/events')] });
	await sb.control.setFaults({ kind: 'http429', count: 2 });
	const started = Date.now();
	const { out } = await run(store, {
		calls: [
			get('/events'),
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/t429' } },
			},
		],
	});
	await sb.control.clearFaults();
	expect(out.map((r) => r.ok)).toEqual([true, true]);
	// Retry-After: 1 (s) was honoured for the two 429s
	expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
});

test('connection refused: retried, then a clear error naming the base URL', async () => {
	const { store, data } = await credential('t-refused');
	const closed = await startSandbox({ quiet: true, demoData: false });
	await closed.close();
	store.replace({
		...data,
		baseUrl: closed.url,
		apiKey: 'ak_never_sent_anywhere_1',
		apiKeyExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
	});
	secrets.add('ak_never_sent_anywhere_1');
	const { out } = await run(store, {
		calls: [
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/x' } },
			},
		],
	});
	expect(out[0].error!.message).toBe(
		`Could not reach the learning platform at ${closed.url} (ECONNREFUSED)`,
	);
	expect(out[0].error!.description).toMatch(/^It was retried 4 times\./);
}, 60_000);

test('listAll: follows meta.last_page, honours limit, no hidden cap', async () => {
	const { store } = await credential('t-pages');
	const creates = Array.from({ length: 100 }, (_, i) => ({
		method: 'POST' as const,
		root: 'webhook' as const,
		path: '',
		options: { body: { event: '*', url: `https://example.com/page-${i}` } },
	}));
	const made = await run(store, { calls: creates, concurrent: true });
	expect(made.out.filter((r) => r.ok)).toHaveLength(100);
	const { out } = await run(store, {
		calls: [
			{ allPages: { path: '' } },
			{ allPages: { path: '', limit: 30 } },
			{ allPages: { path: '', qs: { perPage: 7 } } },
		],
	});
	expect((out[0].body as unknown[]).length).toBe(100);
	expect((out[1].body as unknown[]).length).toBe(30);
	// the transport's perPage wins: qs cannot shrink the pages into a cap
	expect((out[2].body as unknown[]).length).toBe(100);
	// the 101st is refused with the cap message
	const over = await run(store, {
		calls: [
			{
				method: 'POST',
				root: 'webhook',
				path: '',
				options: { body: { event: '*', url: 'https://example.com/page-101' } },
			},
		],
	});
	expect(over.out[0].error!.message).toMatch(/\(422\): .*100/);
});

test('listAll over several pages: 230 delivery log entries in pages of 100', async () => {
	// a sandbox of its own: the other tests' '*' subscriptions would receive these events too
	const own = await startSandbox({
		quiet: true,
		rateLimitPerMinute: 6000,
		demoData: false,
		allowHttpWebhookUrls: true,
	});
	const receiver = createServer((_req, res) => res.end('ok'));
	await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
	try {
		const { store, username, refreshToken } = await newCredential(own, 't-logs');
		secrets.add(refreshToken);
		stores.push(store);
		const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
		const made = await run(store, {
			calls: [
				{
					method: 'POST',
					root: 'webhook',
					path: '',
					options: { body: { event: 'Events\\Users\\Created', url } },
				},
			],
		});
		const id = (made.out[0].body as { id: number }).id;
		for (let i = 0; i < 230; i++) await own.control.simulateEvent('Events\\Users\\Created', { i });
		await own.control.waitForDeliveries({ subscriptionId: id }, 230, 30_000);
		await own.control.clearRequests();
		const { out } = await run(store, {
			calls: [
				{ allPages: { path: `/${id}/logs` } },
				{ allPages: { path: `/${id}/logs`, limit: 150 } },
			],
		});
		const all = out[0].body as Array<{ id: number }>;
		expect(all).toHaveLength(230);
		expect(new Set(all.map((l) => l.id)).size).toBe(230);
		expect((out[1].body as unknown[]).length).toBe(150);
		const pages = (await own.control.requests({ username })).map(
			(r) => `${r.query.page}/${r.query.perPage}`,
		);
		expect(pages).toEqual(['1/100', '2/100', '3/100', '1/100', '2/100']);
	} finally {
		receiver.closeAllConnections();
		receiver.close();
		await own.close();
	}
}, 60_000);

test('scrubbing: secrets never survive into a text or an object', () => {
	const text =
		'Authorization: Bearer rt_abcdefghijklmnop {"signing_key":"sk_123456789","auth_token":"tok-98765432","api_key":"ak_x1y2z3w4"} refresh_token=rt_q1w2e3r4t5 ' +
		'and the raw value my-own-secret-value';
	const out = scrubSecrets(text, ['my-own-secret-value']);
	for (const s of [
		'rt_abcdefghijklmnop',
		'sk_123456789',
		'tok-98765432',
		'ak_x1y2z3w4',
		'rt_q1w2e3r4t5',
		'my-own-secret-value',
	]) {
		expect(out).not.toContain(s);
	}
	expect(out).toContain('"signing_key":"[redacted]"');
	expect(
		scrubObject({
			a: { signing_key: 'sk_1234567', auth_token: null, nested: ['Bearer abcdefgh12345'] },
		}),
	).toEqual({
		a: { signing_key: '[redacted]', auth_token: null, nested: ['Bearer [redacted]'] },
	});
});
