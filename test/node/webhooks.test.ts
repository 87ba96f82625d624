import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { INodeListSearchResult, INodePropertyOptions } from 'n8n-workflow';

import { makeCertificates } from '../../scripts/n8n/tls-front';
import { json, pairedItems, setUpNodeTests, type NodeTestContext } from './setup';

/**
 * Webhook management through the node. An https receiver with a test CA (trusted by the
 * sandbox) stands in for a real endpoint; https://127.0.0.1:9 is one that refuses connections.
 */
let t: NodeTestContext;
let receiver: https.Server;
let receiverUrl: string;
const received: Array<{ url: string; body: string }> = [];
const BULLETS = '\u2022'.repeat(8);
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const REFUSING_URL = 'https://127.0.0.1:9/hook';

beforeAll(async () => {
	const certificates = await makeCertificates(
		path.join(os.tmpdir(), `lp-node-webhooks-${process.pid}`),
	);
	receiver = https.createServer(
		{ key: certificates.keyPem, cert: certificates.certPem },
		(req, res) => {
			let body = '';
			req.on('data', (chunk) => (body += chunk));
			req.on('end', () => {
				received.push({ url: req.url ?? '', body });
				res.setHeader('content-type', 'text/plain');
				res.end('thanks');
			});
		},
	);
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
	receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
	t = await setUpNodeTests('webhooks', { trustedCaPem: certificates.caCertPem });
});
afterAll(async () => {
	await t.close();
	await new Promise((resolve) => receiver.close(resolve));
});

const webhook = (operation: string, extra: Record<string, unknown> = {}) => ({
	resource: 'webhook',
	operation,
	...extra,
});
const byId = (id: unknown) => ({ __rl: true, mode: 'id', value: String(id) });
const fromList = (id: unknown) => ({ __rl: true, mode: 'list', value: String(id) });

async function createSubscription(url: string, extra: Record<string, unknown> = {}) {
	const result = await t.run(webhook('create', { event: COMPLETION_CREATED, url, ...extra }));
	expect(result.error).toBeUndefined();
	return json(result)[0];
}

describe('webhook: events', () => {
	test('getEvents outputs every event of the spec, wildcards included', async () => {
		const result = await t.run(webhook('getEvents'));
		expect(result.error).toBeUndefined();
		const events = json(result);
		expect(events).toHaveLength(29);
		expect(events).toContainEqual({
			event: COMPLETION_CREATED,
			displayName: 'Course: Completion Created',
			wildcard: false,
		});
		expect(events).toContainEqual({ event: '*', displayName: 'All Events (*)', wildcard: true });
		expect(events.filter((e) => e.wildcard)).toHaveLength(5);
	});

	test('the event option list comes from the API, wildcards first', async () => {
		const options = await t.load<INodePropertyOptions[]>('getEvents');
		expect(options).toHaveLength(29);
		expect(options.slice(0, 5).map((o) => o.value)).toEqual([
			'*',
			'Events\\Notifications\\*',
			'Events\\Users\\*',
			'Events\\Courses\\*',
			'Events\\Quiz\\*',
		]);
		expect(options).toContainEqual({
			name: 'Course: Completion Created',
			value: COMPLETION_CREATED,
			description: COMPLETION_CREATED,
		});
		expect((await t.requests('/webhooks/events')).length).toBeGreaterThan(0);
	});
});

describe('webhook: create, get, update, delete', () => {
	test('create sends only the fields set and outputs the secrets it was given', async () => {
		const result = await t.run(
			webhook('create', {
				event: COMPLETION_CREATED,
				url: `${receiverUrl}/create`,
				additionalFields: { signing_key: 'sign-secret-1234', is_enabled: true },
			}),
		);
		expect(result.error).toBeUndefined();
		expect(result.hints.map((h) => h.message)).toEqual([
			expect.stringContaining('unmasked only in this answer'),
		]);
		const [created] = json(result);
		expect(created).toMatchObject({
			id: expect.any(Number),
			event: COMPLETION_CREATED,
			url: `${receiverUrl}/create`,
			signing_key: 'sign-secret-1234',
			auth_token: null,
			is_enabled: true,
		});
		const [stored] = (await t.sandbox.control.subscriptions(t.username)).filter(
			(s) => s.id === created.id,
		);
		// not set by the user -> server defaults, not values invented by the node
		expect(stored).toMatchObject({
			signing_key: 'sign-secret-1234',
			auth_token: null,
			auth_type: null,
		});
	});

	test('an event given by expression (not from the list) is accepted', async () => {
		const created = await createSubscription(`${receiverUrl}/expression`, {
			event: '={{ "Events\\\\Users\\\\*" }}',
		});
		expect(created.event).toBe('Events\\Users\\*');
	});

	test('a URL that is not https:// is refused before sending, naming the field', async () => {
		const before = (await t.requests('/webhooks')).length;
		const result = await t.run(
			webhook('create', { event: COMPLETION_CREATED, url: 'http://example.com/hook' }),
		);
		expect(result.error?.message).toBe(
			'"URL" must be an https:// URL, got "http://example.com/hook"',
		);
		expect((await t.requests('/webhooks')).length).toBe(before);
	});

	test('a duplicate event and URL gives a clear 422 message', async () => {
		await createSubscription(`${receiverUrl}/duplicate`);
		const result = await t.run(
			webhook('create', { event: COMPLETION_CREATED, url: `${receiverUrl}/duplicate` }),
		);
		expect(result.error?.message).toMatch(
			/^Could not create the webhook subscription: .*already exists/,
		);
		expect(result.error?.description).toContain('Update that one instead');
		expect(result.error?.httpCode).toBe('422');
	});

	test('get masks secrets; get by list mode and by ID mode agree', async () => {
		const created = await createSubscription(`${receiverUrl}/get`, {
			additionalFields: { signing_key: 'sign-secret-5678', auth_token: 'token-secret-abcd' },
		});
		const viaId = await t.run(webhook('get', { webhookId: byId(created.id) }));
		const viaList = await t.run(webhook('get', { webhookId: fromList(created.id) }));
		expect(viaId.error).toBeUndefined();
		expect(json(viaId)).toEqual(json(viaList));
		expect(json(viaId)[0]).toMatchObject({
			id: created.id,
			signing_key: `${BULLETS}5678`,
			auth_token: `${BULLETS}abcd`,
		});
	});

	test('update changes only the given fields; secrets come back unmasked only when set in that update', async () => {
		const created = await createSubscription(`${receiverUrl}/update`, {
			additionalFields: { signing_key: 'first-key-1111', auth_token: 'first-token-2222' },
		});
		const disabled = await t.run(
			webhook('update', { webhookId: byId(created.id), updateFields: { is_enabled: false } }),
		);
		expect(disabled.error).toBeUndefined();
		expect(disabled.hints).toEqual([]);
		expect(json(disabled)[0]).toMatchObject({
			is_enabled: false,
			url: `${receiverUrl}/update`,
			signing_key: `${BULLETS}1111`,
			auth_token: `${BULLETS}2222`,
		});

		const rekeyed = await t.run(
			webhook('update', {
				webhookId: byId(created.id),
				updateFields: { signing_key: 'second-key-3333' },
			}),
		);
		expect(json(rekeyed)[0]).toMatchObject({
			signing_key: 'second-key-3333',
			auth_token: `${BULLETS}2222`,
			is_enabled: false,
		});
		const [stored] = (await t.sandbox.control.subscriptions(t.username)).filter(
			(s) => s.id === created.id,
		);
		expect(stored).toMatchObject({
			signing_key: 'second-key-3333',
			auth_token: 'first-token-2222',
			is_enabled: false,
			event: COMPLETION_CREATED,
		});
	});

	test('update with nothing to change, or a non-https URL, fails before any request', async () => {
		const created = await createSubscription(`${receiverUrl}/update-nothing`);
		const before = (await t.requests('/webhooks')).length;
		const nothing = await t.run(
			webhook('update', { webhookId: byId(created.id), updateFields: {} }),
		);
		expect(nothing.error?.message).toBe(
			'Nothing to update: add at least one field under "Update Fields"',
		);
		const insecure = await t.run(
			webhook('update', { webhookId: byId(created.id), updateFields: { url: 'ftp://x' } }),
		);
		expect(insecure.error?.message).toBe('"URL" must be an https:// URL, got "ftp://x"');
		expect((await t.requests('/webhooks')).length).toBe(before);
	});

	test('delete outputs {deleted: true, id}; the subscription is then gone', async () => {
		const created = await createSubscription(`${receiverUrl}/delete`);
		const deleted = await t.run(webhook('delete', { webhookId: byId(created.id) }));
		expect(deleted.error).toBeUndefined();
		expect(json(deleted)).toEqual([{ deleted: true, id: created.id }]);
		const again = await t.run(webhook('get', { webhookId: byId(created.id) }));
		expect(again.error?.httpCode).toBe('404');
		expect(again.error?.message).toBe(
			`Webhook subscription ${created.id} not found (404: Webhook not found.)`,
		);
		for (const operation of ['delete', 'getLogs']) {
			const gone = await t.run(
				webhook(operation, { webhookId: byId(created.id), returnAll: true }),
			);
			expect(gone.error?.message).toBe(
				`Webhook subscription ${created.id} not found (404: Webhook not found.)`,
			);
		}
		const notUpdated = await t.run(
			webhook('update', { webhookId: byId(created.id), updateFields: { is_enabled: false } }),
		);
		expect(notUpdated.error?.message).toBe(
			`Webhook subscription ${created.id} not found (404: Webhook not found.)`,
		);
	});

	test('a webhook ID that is not a number is refused, typed or from an expression', async () => {
		// typed: n8n's own parameter validation (the locator's regex) stops the run
		await expect(t.run(webhook('get', { webhookId: byId('abc') }))).rejects.toThrow(
			'The webhook ID is a whole number',
		);
		// from an expression: the node's check, with the item index
		const result = await t.run(webhook('get', { webhookId: byId('={{ $json.id }}') }), {
			items: [{ json: { id: 'abc' } }],
		});
		expect(result.error?.message).toBe('"Webhook" must be a positive whole number, got "abc"');
		expect(result.error?.context?.itemIndex).toBe(0);
	});
});

describe('webhook: getMany and list search', () => {
	test('Return All pages through more than 100 subscriptions; Limit stops early', async () => {
		const existing = (await t.sandbox.control.subscriptions(t.username)).filter(
			(s) => s.deleted_at === null,
		).length;
		const toCreate = 100 - existing;
		const items = Array.from({ length: toCreate }, (_, i) => ({ json: { path: `bulk-${i}` } }));
		const bulk = await t.run(
			webhook('create', { event: COMPLETION_CREATED, url: `=${receiverUrl}/{{ $json.path }}` }),
			{ items },
		);
		expect(bulk.error).toBeUndefined();
		expect(json(bulk)).toHaveLength(toCreate);
		expect(pairedItems(bulk)).toEqual(items.map((_, i) => i));

		// the 101st is refused by the cap, with a message saying what to do
		const capped = await t.run(
			webhook('create', { event: COMPLETION_CREATED, url: `${receiverUrl}/one-too-many` }),
		);
		expect(capped.error?.message).toMatch(/^Could not create the webhook subscription: .*100/);
		expect(capped.error?.description).toContain('Delete unused ones');

		const all = await t.run(webhook('getMany', { returnAll: true }));
		expect(all.error).toBeUndefined();
		const subscriptions = json(all);
		expect(subscriptions).toHaveLength(100);
		expect(new Set(subscriptions.map((s) => s.id)).size).toBe(100);
		for (const subscription of subscriptions) {
			if (subscription.signing_key !== null)
				expect(String(subscription.signing_key).startsWith(BULLETS)).toBe(true);
		}

		const limited = await t.run(webhook('getMany', { returnAll: false, limit: 7 }));
		expect(json(limited)).toHaveLength(7);
	});

	test('the webhook list search filters by the typed text and pages by page number', async () => {
		const firstPage = await t.load<INodeListSearchResult>('searchWebhooks');
		expect(firstPage.results).toHaveLength(100);
		expect(firstPage.paginationToken).toBeUndefined();
		const filtered = await t.load<INodeListSearchResult>('searchWebhooks', { filter: '/bulk-42' });
		// id, friendly event name, host and path: two subscriptions for one event look different
		expect(filtered.results).toHaveLength(1);
		const [entry] = filtered.results;
		expect(entry.value).toMatch(/^\d+$/);
		expect(entry.name).toBe(
			`#${entry.value} · Course completion created · ${new URL(receiverUrl).host}/bulk-42`,
		);
		// the friendly name can be searched for too
		const byEvent = await t.load<INodeListSearchResult>('searchWebhooks', {
			filter: 'course completion created',
		});
		expect(byEvent.results.length).toBeGreaterThan(0);
	});
});

describe('webhook: delivery logs, redispatch, sample', () => {
	let failingId: number;

	beforeAll(async () => {
		// make room under the 100 cap left by the previous block
		const live = (await t.sandbox.control.subscriptions(t.username)).filter(
			(s) => s.deleted_at === null,
		);
		for (const subscription of live.slice(0, 5)) {
			expect(
				json(await t.run(webhook('delete', { webhookId: byId(subscription.id) })))[0].deleted,
			).toBe(true);
		}
		const failing = await createSubscription(REFUSING_URL, {
			event: 'Events\\Quiz\\Attempt_completed',
		});
		failingId = failing.id as number;
		await t.sandbox.control.simulateEvent('Events\\Quiz\\Attempt_completed', {
			attempt: { id: 1 },
		});
		await t.sandbox.control.simulateEvent('Events\\Quiz\\Attempt_completed', {
			attempt: { id: 2 },
		});
		await t.sandbox.control.waitForDeliveries({ subscriptionId: failingId }, 6, 10_000); // 3 attempts each
	});

	test('getLogs outputs the delivery log entries of one subscription', async () => {
		const result = await t.run(webhook('getLogs', { webhookId: byId(failingId), returnAll: true }));
		expect(result.error).toBeUndefined();
		const logs = json(result);
		expect(logs).toHaveLength(2);
		for (const log of logs) {
			expect(log).toMatchObject({
				event_type: 'Events\\Quiz\\Attempt_completed',
				success: false,
				redispatched: false,
			});
		}
		const limited = await t.run(
			webhook('getLogs', { webhookId: byId(failingId), returnAll: false, limit: 1 }),
		);
		expect(json(limited)).toHaveLength(1);
	});

	test('the log list search needs the chosen webhook and describes each delivery', async () => {
		const search = await t.load<INodeListSearchResult>('searchWebhookLogs', {
			parameters: { resource: 'webhook', operation: 'redispatch', webhookId: byId(failingId) },
		});
		expect(search.results).toHaveLength(2);
		expect(search.results[0].name).toMatch(/^#\d+ Quiz attempt completed · failed/);
	});

	test("redispatch outputs the server's data", async () => {
		const [log] = json(
			await t.run(webhook('getLogs', { webhookId: byId(failingId), returnAll: true })),
		);
		const result = await t.run(
			webhook('redispatch', { webhookId: byId(failingId), logId: fromList(log.id) }),
		);
		expect(result.error).toBeUndefined();
		expect(json(result)).toEqual([
			{
				success: true,
				message: 'Webhook queued for redispatch.',
				event: 'Events\\Quiz\\Attempt_completed',
			},
		]);
		const unknown = await t.run(
			webhook('redispatch', { webhookId: byId(failingId), logId: byId(987654) }),
		);
		expect(unknown.error?.httpCode).toBe('404');
		expect(unknown.error?.message).toBe(
			`Delivery log entry 987654 of webhook subscription ${failingId} not found (404: Log entry not found.)`,
		);
	});

	test('sendSample without a URL outputs the sample payload', async () => {
		const result = await t.run(webhook('sendSample', { event: COMPLETION_CREATED }));
		expect(result.error).toBeUndefined();
		const [sample] = json(result);
		expect(sample.success).toBe(true);
		expect(sample.data).toMatchObject({
			event: COMPLETION_CREATED,
			api_version: '2.0',
			payload: { completion: expect.any(Object) },
		});
	});

	test('sendSample with a URL delivers there and outputs the outcome', async () => {
		const result = await t.run(
			webhook('sendSample', { event: COMPLETION_CREATED, url: `${receiverUrl}/sample` }),
		);
		expect(result.error).toBeUndefined();
		expect(json(result)[0]).toMatchObject({ success: true, status_code: 200, data: 'thanks' });
		const delivered = received.find((r) => r.url === '/sample');
		expect(JSON.parse(delivered!.body)).toMatchObject({ event: COMPLETION_CREATED });

		const refused = await t.run(
			webhook('sendSample', { event: COMPLETION_CREATED, url: REFUSING_URL }),
		);
		expect(json(refused)[0]).toMatchObject({ success: false, status_code: 0 });
	});

	test('sendSample refuses a wildcard and a non-https URL before sending', async () => {
		const before = (await t.requests('/relay')).length;
		const wildcard = await t.run(webhook('sendSample', { event: 'Events\\Courses\\*' }));
		expect(wildcard.error?.message).toBe(
			'"Event" must be a single event, not the wildcard "Events\\Courses\\*"',
		);
		const insecure = await t.run(
			webhook('sendSample', { event: COMPLETION_CREATED, url: 'http://127.0.0.1/x' }),
		);
		expect(insecure.error?.message).toBe(
			'"Send To URL" must be an https:// URL, got "http://127.0.0.1/x"',
		);
		expect((await t.requests('/relay')).length).toBe(before);
	});
});
