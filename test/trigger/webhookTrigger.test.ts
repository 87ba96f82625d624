/**
 * The webhook trigger against the sandbox, through n8n-core's real HookContext and
 * WebhookContext: subscription lifecycle (create / checkExists / delete, duplicate adoption, the
 * cap, the 404 paths, the HTTPS rule) and delivery checks with the exact bytes and headers the
 * sandbox sent (captured from /__sandbox/deliveries, since it only delivers to https URLs).
 */
import { createHmac } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import type { IDataObject } from 'n8n-workflow';

import { WAIT_FOR_EARLIER_ANSWER_MS } from '../../nodes/LearningPlatformTrigger/deliveries/ledger';
import {
	ProcessLedgers,
	useLedgers,
} from '../../nodes/LearningPlatformTrigger/deliveries/processLedgers';
import { clock, useClock } from '../../nodes/shared/transport/clock';
import { sharedDeliveries } from '../../nodes/LearningPlatformTrigger/deliveries/ledgerText';
import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import { retireAllNow } from '../../nodes/LearningPlatformTrigger/subscription/retirement';
import type { DeliveryAttempt } from '../../sandbox';
import { makeCertificates } from '../../scripts/n8n/tls-front';
import { runHook, runWebhook, type CredentialStore } from '../support/n8n';
import { setUpTriggerTests, type TriggerTestContext } from './setup';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const COMPLETION_UPDATED = 'Events\\Courses\\Completion_updated';
const COURSES_WILDCARD = 'Events\\Courses\\*';

jest.setTimeout(60_000);

const trigger = new LearningPlatformTrigger();
let t: TriggerTestContext;

beforeAll(async () => {
	t = await setUpTriggerTests('webhook');
});
afterAll(async () => {
	// no deletion waiting for its grace period outlives the sandbox
	await retireAllNow();
	await t.close();
});

interface Activation {
	staticData: IDataObject;
	credentials: CredentialStore;
	parameters: IDataObject;
	webhookBaseUrl?: string;
	isTest?: boolean;
	workflowId: string;
}

let workflows = 0;

function activation(overrides: Partial<Activation> = {}): Activation {
	return {
		staticData: {},
		credentials: t.credentials,
		// recovery runs in the background and redispatches through the sandbox: its own tests are
		// test/trigger/recovery.test.ts
		parameters: { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: false } },
		workflowId: `workflow-${++workflows}`,
		...overrides,
	};
}

async function hook(method: 'checkExists' | 'create' | 'delete', a: Activation) {
	return await runHook(trigger, method, {
		parameters: a.parameters,
		credentials: a.credentials,
		staticData: a.staticData,
		webhookBaseUrl: a.webhookBaseUrl,
		isTest: a.isTest,
		workflowId: a.workflowId,
	});
}

/** n8n's activation: checkExists, then create only when it returned false. */
async function activate(a: Activation) {
	const exists = await hook('checkExists', a);
	if (!exists.result) await hook('create', a);
	// a copy: `delete` clears the live static data object
	return { ...stored(a) };
}

function stored(a: Activation): IDataObject {
	return (a.staticData[NODE_KEY] ?? {}) as IDataObject;
}

async function subscriptionsOf(username = t.username) {
	return await t.sandbox.control.subscriptions(username);
}

async function deliver(
	a: Activation,
	headers: Record<string, string>,
	rawBody: Buffer,
	parameters = a.parameters,
	n8nAnswer?: 'created' | 'failed' | 'later',
) {
	return await runWebhook(trigger, {
		parameters,
		credentials: a.credentials,
		staticData: a.staticData,
		workflowId: a.workflowId,
		headers,
		rawBody,
		n8nAnswer,
	});
}

/** The sandbox's next delivery attempt to this subscription after `fire` (exact body and headers). */
async function captureDelivery(
	subscriptionId: number,
	fire: () => Promise<unknown>,
): Promise<DeliveryAttempt> {
	const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
	await fire();
	const attempts = await t.sandbox.control.waitForDeliveries(
		{ subscriptionId },
		before + 1,
		10_000,
	);
	return attempts[before];
}

async function aCourseAndLearner() {
	const demo = await t.sandbox.control.demo();
	const course = demo.content.find((c) => c.contenttype === 'Course' && !c.deleted)!;
	const learner = demo.users.find((u) => !u.deleted && !u.suspended)!;
	return { contentId: course.id, userId: learner.id };
}

describe('activation: create / checkExists / delete', () => {
	test('create registers a subscription for the webhook URL with fresh 32-byte secrets and keeps them in static data', async () => {
		const a = activation();
		expect((await hook('checkExists', a)).result).toBe(false);
		expect((await hook('create', a)).result).toBe(true);

		const kept = stored(a);
		expect(kept.url).toMatch(/^https:\/\/n8n\.invalid\/webhook\/.+\/webhook$/);
		expect(kept.event).toBe(COMPLETION_CREATED);
		expect(kept.signingKey).toMatch(/^[0-9a-f]{64}$/);
		expect(kept.authToken).toMatch(/^[0-9a-f]{64}$/);
		expect(kept.signingKey).not.toBe(kept.authToken);

		const subscription = (await subscriptionsOf()).find((s) => s.id === kept.subscriptionId)!;
		expect(subscription).toMatchObject({
			event: COMPLETION_CREATED,
			url: kept.url,
			is_enabled: true,
			signing_key: kept.signingKey,
			auth_token: kept.authToken,
			deleted_at: null,
		});

		expect((await hook('checkExists', a)).result).toBe(true);
		expect((await hook('delete', a)).result).toBe(true);
	});

	test('checkExists is false when the subscription was disabled, or the event or URL changed', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/check' });
		await activate(a);
		const id = stored(a).subscriptionId as number;
		expect((await hook('checkExists', a)).result).toBe(true);

		expect(
			(
				await hook('checkExists', {
					...a,
					parameters: { event: COMPLETION_UPDATED, options: { recoverMissedDeliveries: false } },
				})
			).result,
		).toBe(false);
		expect(
			(await hook('checkExists', { ...a, webhookBaseUrl: 'https://other.test/webhook' })).result,
		).toBe(false);

		expect((await t.api('PATCH', `/${id}`, { is_enabled: false })).status).toBe(200);
		expect((await hook('checkExists', a)).result).toBe(false);
		// the data is kept: the next create adopts the subscription instead of orphaning it
		expect(stored(a).subscriptionId).toBe(id);

		await hook('delete', a);
	});

	test('checkExists is false when the secrets were replaced elsewhere (masked tails differ)', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/rotated' });
		await activate(a);
		const id = stored(a).subscriptionId as number;
		expect(
			(await t.api('PATCH', `/${id}`, { signing_key: 'replaced-by-someone-else' })).status,
		).toBe(200);
		expect((await hook('checkExists', a)).result).toBe(false);
		await hook('create', a);
		const subscription = (await subscriptionsOf()).find((s) => s.id === id)!;
		expect(subscription.signing_key).toBe(stored(a).signingKey);
		expect((await hook('checkExists', a)).result).toBe(true);
		await hook('delete', a);
	});

	test("after a disabled subscription, activation adopts it (422 duplicate): the node's secrets, enabled, same id", async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/adopt-disabled' });
		await activate(a);
		const first = { ...stored(a) };
		await t.api('PATCH', `/${first.subscriptionId as number}`, { is_enabled: false });

		// someone set other secrets on the platform meanwhile
		await t.api('PATCH', `/${first.subscriptionId as number}`, {
			signing_key: 'changed-elsewhere-1234',
			auth_token: 'changed-elsewhere-5678',
		});

		const after = await activate(a);
		expect(after.subscriptionId).toBe(first.subscriptionId);
		expect(after.signingKey).toBe(first.signingKey);
		expect(after.authToken).toBe(first.authToken);

		const live = (await subscriptionsOf()).filter(
			(s) => s.url === first.url && s.deleted_at === null,
		);
		expect(live).toHaveLength(1);
		expect(live[0]).toMatchObject({
			id: first.subscriptionId,
			is_enabled: true,
			signing_key: after.signingKey,
			auth_token: after.authToken,
		});
		await hook('delete', a);
	});

	test('with lost static data, create adopts the existing event+url subscription instead of failing', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/adopt-lost' });
		await activate(a);
		const first = { ...stored(a) };

		const fresh = activation({ webhookBaseUrl: 'https://n8n.invalid/adopt-lost' });
		expect((await hook('checkExists', fresh)).result).toBe(false);
		expect((await hook('create', fresh)).result).toBe(true);
		expect(stored(fresh).subscriptionId).toBe(first.subscriptionId);

		const subscription = (await subscriptionsOf()).find((s) => s.id === first.subscriptionId)!;
		expect(subscription.signing_key).toBe(stored(fresh).signingKey);
		expect(subscription.auth_token).toBe(stored(fresh).authToken);
		expect(subscription.is_enabled).toBe(true);
		await hook('delete', fresh);
	});

	test('a changed WEBHOOK_URL moves the subscription in place: the same id, the new URL, the failures logged before kept for recovery', async () => {
		const a = activation({ webhookBaseUrl: 'https://old.invalid/webhook' });
		await activate(a);
		const oldId = stored(a).subscriptionId as number;
		// old.invalid does not resolve: a delivery fails and is logged
		const failed = await captureDelivery(oldId, () => t.sandbox.control.simulateCompletion({}));
		expect(failed.status_code).toBeNull();

		const moved = { ...a, webhookBaseUrl: 'https://new.test/webhook' };
		const after = await activate(moved);
		expect(after.subscriptionId).toBe(oldId);
		expect(after.url).toMatch(/^https:\/\/new\.test\//);
		const live = (await subscriptionsOf()).filter((s) => s.deleted_at === null);
		const subscription = live.find((s) => s.id === oldId)!;
		expect(subscription.url).toBe(after.url);
		expect(subscription.signing_key).toBe(after.signingKey);
		expect(live.filter((s) => s.url.startsWith('https://old.invalid/'))).toEqual([]);
		const log = (await t.api('GET', `/${oldId}/logs`)).body.data as Array<{ success: boolean }>;
		expect(log.some((entry) => entry.success === false)).toBe(true);
		await hook('delete', moved);
	});

	test("a copy of the instance (its workflow's static data, another WEBHOOK_URL) registers a subscription of its own while the original still runs the trigger; switching the copy off leaves the original's", async () => {
		// the original instance: its trigger answers an unsigned request 401, as an active one does
		const certificates = await makeCertificates(
			path.join(os.tmpdir(), `lp-trigger-copy-${process.pid}`),
		);
		const original = createHttpsServer(
			{ key: certificates.keyPem, cert: certificates.certPem },
			(_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{}'),
		);
		await new Promise<void>((resolve) => original.listen(0, '127.0.0.1', resolve));
		try {
			const port = (original.address() as AddressInfo).port;
			const production = activation({ webhookBaseUrl: `https://127.0.0.1:${port}/production` });
			const before = await activate(production);
			const productionId = before.subscriptionId as number;

			// a staging copy: the same workflow and static data, activated at its own address
			const staging = {
				...production,
				staticData: JSON.parse(JSON.stringify(production.staticData)) as IDataObject,
				webhookBaseUrl: 'https://staging.invalid/webhook',
			};
			const copy = await activate(staging);
			expect(copy.subscriptionId).not.toBe(productionId);
			const live = (await subscriptionsOf()).filter((s) => s.deleted_at === null);
			expect(live.find((s) => s.id === productionId)).toMatchObject({
				url: before.url,
				is_enabled: true,
			});
			expect(live.find((s) => s.id === copy.subscriptionId)?.url).toBe(copy.url);

			await hook('delete', staging);
			await retireAllNow();
			const after = (await subscriptionsOf()).filter((s) => s.deleted_at === null);
			expect(after.map((s) => s.id)).toContain(productionId);
			expect(after.map((s) => s.id)).not.toContain(copy.subscriptionId);
			await hook('delete', production);
		} finally {
			await new Promise((resolve) => original.close(resolve));
		}
	});

	test('a moved URL whose subscription is gone (404) gets a new one', async () => {
		const a = activation({ webhookBaseUrl: 'https://old.invalid/gone-before-move' });
		await activate(a);
		const oldId = stored(a).subscriptionId as number;
		expect((await t.api('DELETE', `/${oldId}`)).status).toBe(204);

		const moved = { ...a, webhookBaseUrl: 'https://new.test/gone-before-move' };
		expect((await hook('create', moved)).result).toBe(true);
		expect(stored(moved).subscriptionId).not.toBe(oldId);
		expect(
			(await subscriptionsOf()).find((s) => s.id === stored(moved).subscriptionId)!.deleted_at,
		).toBeNull();
		await hook('delete', moved);
	});

	test('checkExists on a subscription deleted elsewhere (404) clears static data and returns false', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/gone' });
		await activate(a);
		const id = stored(a).subscriptionId as number;
		expect((await t.api('DELETE', `/${id}`)).status).toBe(204);

		expect((await hook('checkExists', a)).result).toBe(false);
		expect(stored(a)).toEqual({ secretSeed: expect.any(String) }); // kept for good
		// and activation then creates a new one
		const after = await activate(a);
		expect(after.subscriptionId).not.toBe(id);
		await hook('delete', a);
	});

	test('delete retires the subscription after a grace period, static data keeping it meanwhile; a 404 then is fine', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/delete' });
		await activate(a);
		const kept = { ...stored(a) };
		const live = async (id: unknown) =>
			(await subscriptionsOf()).find((s) => s.id === id)!.deleted_at === null;

		expect((await hook('delete', a)).result).toBe(true);
		// n8n saves this: an activation that follows at once (a published edit) finds it
		expect(stored(a)).toEqual(kept);
		expect(await live(kept.subscriptionId)).toBe(true);
		await retireAllNow(); // the grace period passes with no activation: switched off
		expect(await live(kept.subscriptionId)).toBe(false);

		// the next activation finds it gone (404) and registers a new one
		const renewed = await activate(a);
		expect(renewed.subscriptionId).not.toBe(kept.subscriptionId);

		// the old data once more (deleted elsewhere first): the retirement's 404 is fine
		const current = { ...stored(a) };
		a.staticData[NODE_KEY] = { ...kept };
		expect((await hook('delete', a)).result).toBe(true);
		await retireAllNow();
		a.staticData[NODE_KEY] = current;
		expect((await hook('delete', a)).result).toBe(true);
		await retireAllNow();
		expect(await live(renewed.subscriptionId)).toBe(false);

		// nothing stored: nothing to do
		a.staticData[NODE_KEY] = { secretSeed: current.secretSeed };
		expect((await hook('delete', a)).result).toBe(true);
	});

	test('a published edit of the trigger (delete, then at once checkExists) keeps the subscription: the same id, never deleted', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/edit-published' });
		const first = { ...(await activate(a)) };
		await hook('delete', a);
		// the edit: an option of the trigger changed (what the subscription holds did not)
		a.parameters = {
			...a.parameters,
			options: { ...(a.parameters.options as IDataObject), maxDeliveryAgeMinutes: 60 },
		};
		const again = await activate(a);
		expect(again.subscriptionId).toBe(first.subscriptionId);
		await retireAllNow(); // nothing is waiting: the activation took it over
		const live = (await subscriptionsOf()).filter(
			(s) => s.deleted_at === null && s.url === first.url,
		);
		expect(live.map((s) => s.id)).toEqual([first.subscriptionId]);
		await hook('delete', a);
	});

	test('a published edit that changes the event: the new subscription is registered, the old one deleted at once', async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/event-changed' });
		const first = { ...(await activate(a)) };
		await hook('delete', a);
		a.parameters = { ...a.parameters, event: 'Events\\Quiz\\Attempt_completed' };
		const again = await activate(a);
		expect(again.subscriptionId).not.toBe(first.subscriptionId);
		const byId = new Map((await subscriptionsOf()).map((s) => [s.id, s]));
		expect(byId.get(first.subscriptionId as number)!.deleted_at).not.toBeNull();
		expect(byId.get(again.subscriptionId as number)).toMatchObject({
			deleted_at: null,
			event: 'Events\\Quiz\\Attempt_completed',
		});
		await hook('delete', a);
	});

	test('a non-https webhook URL fails before anything is sent, explaining WEBHOOK_URL', async () => {
		const { username, credentials } = await t.newUser('http');
		const a = activation({ credentials, webhookBaseUrl: 'http://localhost:5678/webhook' });
		const error = await hook('create', a).catch((e: Error & { description?: string }) => e);
		expect(error).toBeInstanceOf(Error);
		const { message, description } = error as Error & { description?: string };
		expect(message).toContain('https://');
		expect(message).toContain('http://localhost:5678/webhook');
		expect(description).toContain('WEBHOOK_URL');
		expect(await t.sandbox.control.requests({ username })).toHaveLength(0);
		expect(stored(a)).toEqual({});
	});

	test('the 100-subscription cap gives an error that names the limit', async () => {
		const { username, credentials } = await t.newUser('cap');
		// fill the cap through the trigger itself, 100 distinct webhook URLs (an event nothing
		// here fires, so the sandbox does not try to deliver to them)
		const fillers: Activation[] = [];
		for (let i = 0; i < 100; i++) {
			const filler = activation({
				credentials,
				parameters: {
					event: 'Events\\Quiz\\Attempt_completed',
					options: { recoverMissedDeliveries: false },
				},
				webhookBaseUrl: `https://fill-${i}.test/webhook`,
			});
			await hook('create', filler);
			fillers.push(filler);
		}
		expect((await subscriptionsOf(username)).filter((s) => s.deleted_at === null)).toHaveLength(
			100,
		);

		const a = activation({ credentials, webhookBaseUrl: 'https://n8n.invalid/over-cap' });
		const error = (await hook('create', a).catch((e: Error) => e)) as Error & {
			description?: string;
		};
		expect(error).toBeInstanceOf(Error);
		expect(error.message).toContain('100');
		expect(error.message).toMatch(/at most 100 webhook subscriptions per API key/);
		expect(stored(a)).toEqual({ secretSeed: expect.any(String) }); // kept for good

		// one deactivation frees a place, at once when the place is needed (not after its grace)
		await hook('delete', fillers[0]);
		expect((await hook('create', a)).result).toBe(true);
		for (const filler of [...fillers.slice(1), a]) await hook('delete', filler);
		await retireAllNow();
		expect((await subscriptionsOf(username)).filter((s) => s.deleted_at === null)).toHaveLength(0);
	});

	test('"listen for test event": the /webhook-test/ URL gets its own subscription, created from empty static data', async () => {
		const a = activation({ isTest: true });
		const kept = await activate(a);
		expect(kept.url).toMatch(/^https:\/\/n8n\.invalid\/webhook-test\//);
		const { contentId, userId } = await aCourseAndLearner();
		const attempt = await captureDelivery(kept.subscriptionId as number, () =>
			t.sandbox.control.simulateCompletion({ contentId, userId }),
		);
		const { webhookResponse } = await deliver(
			a,
			attempt.headers,
			Buffer.from(attempt.body, 'utf8'),
		);
		expect(webhookResponse.workflowData?.[0]).toHaveLength(1);
		expect((await hook('delete', a)).result).toBe(true);
		expect(
			(await subscriptionsOf()).find((s) => s.id === kept.subscriptionId)!.deleted_at,
		).not.toBeNull();
	});
});

describe('a re-activation racing a delivery', () => {
	test("a delivery's save of static data loaded before the re-activation does not lock the new subscription out", async () => {
		const a = activation({ webhookBaseUrl: 'https://n8n.invalid/race' });
		await activate(a);
		const before = JSON.parse(JSON.stringify(a.staticData)) as IDataObject; // what a delivery loaded
		await hook('delete', a);
		await retireAllNow(); // switched off, and on again later: a new subscription
		const renewed = await activate(a);
		// n8n saves the delivery's whole static data last: the old subscription's id comes back
		for (const key of Object.keys(a.staticData)) delete a.staticData[key];
		Object.assign(a.staticData, before);
		expect(stored(a).subscriptionId).not.toBe(renewed.subscriptionId);

		// a delivery of the new subscription, signed with what the platform now holds for it
		const live = (await subscriptionsOf()).find((s) => s.id === renewed.subscriptionId)!;
		const rawBody = Buffer.from(
			JSON.stringify({
				event: COMPLETION_CREATED,
				payload: { race: 1 },
				now: 1,
				delivery_id: '',
				api_version: '2.0',
			}),
			'utf8',
		);
		const run = await deliver(
			a,
			{
				'content-type': 'application/json',
				authorization: `Bearer ${live.auth_token as string}`,
				'x-signature': createHmac('sha256', live.signing_key as string)
					.update(rawBody)
					.digest('hex'),
			},
			rawBody,
		);
		expect(run.response.statusCode).toBe(200);
		expect(run.webhookResponse.workflowData?.[0]).toHaveLength(1);
		// and the next activation repairs the id: checkExists sees the old one gone, create adopts
		const repaired = await activate(a);
		expect(repaired.subscriptionId).toBe(renewed.subscriptionId);
		await hook('delete', a);
	});
});

describe('deliveries', () => {
	let a: Activation;
	let attempt: DeliveryAttempt;
	let rawBody: Buffer;

	beforeAll(async () => {
		// The same captured bytes are delivered again and again here to test the checks; the
		// repeat detection (on by default) is tested in its own block below.
		a = activation({
			webhookBaseUrl: 'https://n8n.invalid/deliveries',
			parameters: {
				event: COMPLETION_CREATED,
				options: { ignoreRepeatedDeliveries: false, recoverMissedDeliveries: false },
			},
		});
		const kept = await activate(a);
		const { contentId, userId } = await aCourseAndLearner();
		attempt = await captureDelivery(kept.subscriptionId as number, () =>
			t.sandbox.control.simulateCompletion({ contentId, userId }),
		);
		rawBody = Buffer.from(attempt.body, 'utf8');
	});
	afterAll(async () => await hook('delete', a));

	const headersWith = (changes: Record<string, string | undefined>) => {
		const headers: Record<string, string> = { ...attempt.headers };
		for (const [name, value] of Object.entries(changes)) {
			if (value === undefined) delete headers[name];
			else headers[name] = value;
		}
		return headers;
	};
	const digest = () => Buffer.from(attempt.headers['x-signature'], 'hex');

	async function expectRejected(headers: Record<string, string>, body = rawBody) {
		const { webhookResponse, response } = await deliver(a, headers, body);
		expect(webhookResponse).toEqual({ noWebhookResponse: true });
		expect(webhookResponse.workflowData).toBeUndefined();
		expect(response.statusCode).toBe(401);
		expect(response.ended).toBe(true);
	}

	test('the sandbox signed the delivery with the stored key and sent the stored token', () => {
		expect(attempt.headers['x-signature']).toBe(
			createHmac('sha256', stored(a).signingKey as string)
				.update(rawBody)
				.digest('hex'),
		);
		expect(attempt.headers.authorization).toBe(`Bearer ${stored(a).authToken as string}`);
	});

	test('a valid delivery (hex signature, as sent) starts one execution with the body untouched', async () => {
		const { webhookResponse, response } = await deliver(a, attempt.headers, rawBody);
		const items = webhookResponse.workflowData?.[0] ?? [];
		expect(items).toHaveLength(1);
		const sent = JSON.parse(attempt.body) as IDataObject;
		expect(items[0].json).toEqual(sent);
		expect(Object.keys(items[0].json).sort()).toEqual([
			'api_version',
			'delivery_id',
			'event',
			'now',
			'payload',
		]);
		expect(items[0].json.event).toBe(COMPLETION_CREATED);
		expect(items[0].json.api_version).toBe('2.0');
		const completion = (items[0].json.payload as IDataObject).completion as IDataObject;
		// timestamps exactly as sent (+00:00 form kept)
		expect(completion.time_completed).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
		expect(response.statusCode).toBe(200);
		// the acknowledgement n8n sends back (and the platform keeps in its delivery log)
		expect(webhookResponse.webhookResponse).toEqual({ received: true, passedOn: true });
		expect(trigger.description.webhooks?.[0]).toMatchObject({
			responseMode: 'onReceived',
			responseData: '',
		});
	});

	test('a valid base64 signature is accepted', async () => {
		const { webhookResponse } = await deliver(
			a,
			headersWith({ 'x-signature': digest().toString('base64') }),
			rawBody,
		);
		expect(webhookResponse.workflowData?.[0]).toHaveLength(1);
	});

	test('a valid signature with a sha256= prefix is accepted (hex and base64)', async () => {
		for (const signature of [
			`sha256=${digest().toString('hex')}`,
			`sha256=${digest().toString('base64')}`,
		]) {
			const { webhookResponse } = await deliver(
				a,
				headersWith({ 'x-signature': signature }),
				rawBody,
			);
			expect(webhookResponse.workflowData?.[0]).toHaveLength(1);
		}
	});

	test('a tampered body is answered 401 and starts nothing', async () => {
		const tampered = Buffer.from(
			attempt.body.replace('"api_version":"2.0"', '"api_version":"2.1"'),
			'utf8',
		);
		expect(tampered.equals(rawBody)).toBe(false);
		await expectRejected(attempt.headers, tampered);
	});

	test('a signature made with another key is answered 401', async () => {
		const forged = createHmac('sha256', 'not-the-stored-key').update(rawBody).digest('hex');
		await expectRejected(headersWith({ 'x-signature': forged }));
	});

	test('a missing X-Signature header is answered 401', async () => {
		await expectRejected(headersWith({ 'x-signature': undefined }));
	});

	test('a wrong or missing bearer token is answered 401, even with a valid signature', async () => {
		await expectRejected(headersWith({ authorization: 'Bearer not-the-token' }));
		await expectRejected(headersWith({ authorization: undefined }));
	});

	test('a refused delivery is logged with its reason (warn; debug without any credentials), never a secret or the body', async () => {
		// n8n-core's contexts take their logger from the container: a recording one for this test
		const n8nLogger = Container.get(Logger);
		const lines: Record<'warn' | 'debug', unknown[][]> = { warn: [], debug: [] };
		const record =
			(level: 'warn' | 'debug') =>
			(...args: unknown[]) =>
				lines[level].push(args);
		Container.set(Logger, {
			warn: record('warn'),
			debug: record('debug'),
			info: () => {},
			error: () => {},
		} as unknown as Logger);
		try {
			await expectRejected(headersWith({ authorization: 'Bearer not-the-token' }));
			await expectRejected(headersWith({ 'x-signature': 'f'.repeat(64) }));
			await expectRejected(headersWith({ authorization: undefined }));
			const refusals = (calls: unknown[][]) =>
				calls
					.filter(([message]) => String(message).includes('a delivery was refused'))
					.map(([message, meta]) => [message, (meta as { reason: string }).reason]);
			expect(refusals(lines.warn)).toEqual([
				['Learning Platform Trigger: a delivery was refused (401): wrong-token', 'wrong-token'],
				[
					'Learning Platform Trigger: a delivery was refused (401): wrong-signature',
					'wrong-signature',
				],
			]);
			expect(refusals(lines.debug)).toEqual([
				['Learning Platform Trigger: a delivery was refused (401): missing-token', 'missing-token'],
			]);
			const logged = JSON.stringify([...lines.warn, ...lines.debug]);
			for (const secret of [stored(a).authToken, stored(a).signingKey, rawBody.toString()])
				expect(logged).not.toContain(String(secret));
		} finally {
			Container.set(Logger, n8nLogger);
		}
	});

	test('without stored secrets every delivery is rejected', async () => {
		const { webhookResponse, response } = await runWebhook(trigger, {
			parameters: a.parameters,
			credentials: a.credentials,
			staticData: { [NODE_KEY]: { subscriptionId: stored(a).subscriptionId as number } },
			headers: attempt.headers,
			rawBody,
		});
		expect(webhookResponse).toEqual({ noWebhookResponse: true });
		expect(response.statusCode).toBe(401);
	});

	test('a correctly signed body that is not JSON is answered 400 and starts nothing', async () => {
		const notJson = Buffer.from('event=Events%5CCourses%5CCompletion_created', 'utf8');
		const signature = createHmac('sha256', stored(a).signingKey as string)
			.update(notJson)
			.digest('hex');
		const { webhookResponse, response } = await deliver(
			a,
			headersWith({ 'x-signature': signature }),
			notJson,
		);
		expect(webhookResponse).toEqual({ noWebhookResponse: true });
		expect(response.statusCode).toBe(400);
	});
});

describe('wildcard subscriptions', () => {
	test('pass on only the chosen concrete events; others are acknowledged without an execution', async () => {
		const parameters = {
			event: COURSES_WILDCARD,
			passOnEvents: [COMPLETION_CREATED],
			options: { recoverMissedDeliveries: false },
		};
		const a = activation({ parameters, webhookBaseUrl: 'https://n8n.invalid/wildcard' });
		const kept = await activate(a);
		expect(kept.event).toBe(COURSES_WILDCARD);
		const { contentId, userId } = await aCourseAndLearner();

		const created = await captureDelivery(kept.subscriptionId as number, () =>
			t.sandbox.control.simulateCompletion({ contentId, userId }),
		);
		const createdRun = await deliver(a, created.headers, Buffer.from(created.body, 'utf8'));
		expect(createdRun.webhookResponse.workflowData?.[0]).toHaveLength(1);

		const completionId = (
			(JSON.parse(created.body) as IDataObject).payload as { completion: { id: number } }
		).completion.id;
		const updated = await captureDelivery(kept.subscriptionId as number, () =>
			t.sandbox.control.simulateRecordChange(completionId),
		);
		expect(updated.event).toBe(COMPLETION_UPDATED);
		const updatedRun = await deliver(a, updated.headers, Buffer.from(updated.body, 'utf8'));
		expect(updatedRun.webhookResponse.workflowData).toBeUndefined();
		expect(updatedRun.webhookResponse.webhookResponse).toEqual({ received: true, passedOn: false });

		// with no choice, the wildcard passes on everything it covers
		const everything = await deliver(a, updated.headers, Buffer.from(updated.body, 'utf8'), {
			event: COURSES_WILDCARD,
			options: { recoverMissedDeliveries: false },
		});
		expect(everything.webhookResponse.workflowData?.[0]).toHaveLength(1);
		await hook('delete', a);
	});
});

describe('repeated deliveries (a retry after a time-out, a redispatch, another process)', () => {
	let a: Activation;
	let first: DeliveryAttempt;
	let retry: DeliveryAttempt;

	beforeAll(async () => {
		a = activation({ webhookBaseUrl: 'https://n8n.invalid/repeats' });
		const kept = await activate(a);
		const { contentId, userId } = await aCourseAndLearner();
		// n8n.invalid does not resolve, so the sandbox retries the delivery: its own retry bytes.
		const subscriptionId = kept.subscriptionId as number;
		const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
		const { deliveryMaxAttempts, deliveryBackoffMs } = await t.sandbox.control.getConfig();
		await t.sandbox.control.setConfig({ deliveryMaxAttempts: 2, deliveryBackoffMs: 50 });
		try {
			await t.sandbox.control.simulateCompletion({ contentId, userId });
			const attempts = await t.sandbox.control.waitForDeliveries(
				{ subscriptionId },
				before + 2,
				15_000,
			);
			[first, retry] = attempts.slice(before, before + 2);
		} finally {
			await t.sandbox.control.setConfig({ deliveryMaxAttempts, deliveryBackoffMs });
		}
	});
	afterAll(async () => await hook('delete', a));

	const body = (attempt: DeliveryAttempt) => Buffer.from(attempt.body, 'utf8');
	const started = (run: Awaited<ReturnType<typeof deliver>>) =>
		run.webhookResponse.workflowData?.[0]?.length ?? 0;
	/** Headers as the platform would sign `rawBody` for activation `b`. */
	const signedFor = (b: Activation, rawBody: Buffer) => ({
		'content-type': 'application/json',
		authorization: `Bearer ${stored(b).authToken as string}`,
		'x-signature': createHmac('sha256', stored(b).signingKey as string)
			.update(rawBody)
			.digest('hex'),
	});
	let occurrences = 0;
	/** Another event occurrence: a completion record of its own (sign it with signedFor). */
	const freshBody = (marker: string) => {
		const sent = JSON.parse(first.body) as IDataObject;
		const completion = (sent.payload as { completion: IDataObject }).completion;
		const payload = {
			...(sent.payload as IDataObject),
			marker,
			completion: { ...completion, id: 900_000 + ++occurrences },
		};
		return Buffer.from(JSON.stringify({ ...sent, payload }), 'utf8');
	};
	/** The same occurrence redispatched: a new send time and delivery id, the same payload. */
	const redispatchOf = (rawBody: Buffer, deliveryId: string) => {
		const sent = JSON.parse(rawBody.toString('utf8')) as IDataObject;
		const now = (sent.now as number) + 120;
		return Buffer.from(JSON.stringify({ ...sent, now, delivery_id: deliveryId }), 'utf8');
	};

	test("the sandbox's retry re-sends identical bytes and headers", () => {
		expect(retry.attempt).toBe(first.attempt + 1);
		expect(retry.body).toBe(first.body);
		expect(retry.headers['x-signature']).toBe(first.headers['x-signature']);
	});

	test('a retry of a delivery that started an execution is acknowledged without a second one', async () => {
		const accepted = await deliver(a, first.headers, body(first));
		expect(started(accepted)).toBe(1);
		expect(accepted.response).toMatchObject({ statusCode: 200, ended: true });

		const repeated = await deliver(a, retry.headers, body(retry));
		expect(repeated.webhookResponse.workflowData).toBeUndefined();
		expect(repeated.webhookResponse.webhookResponse).toEqual({
			received: true,
			passedOn: false,
			repeated: true,
		});
		expect(repeated.response.statusCode).toBe(200);
	});

	test('when n8n could not create the execution (answered 500), the retry starts one', async () => {
		const rawBody = freshBody('failed-first');
		const refused = await deliver(a, signedFor(a, rawBody), rawBody, undefined, 'failed');
		expect(started(refused)).toBe(1);
		expect(refused.response.statusCode).toBe(500);

		const retried = await deliver(a, signedFor(a, rawBody), rawBody);
		expect(started(retried)).toBe(1);
		// and that accepted retry is now the one later repeats are judged against
		const again = await deliver(a, signedFor(a, rawBody), rawBody);
		expect(started(again)).toBe(0);
	});

	test('a retry that arrives while the first attempt is still unanswered waits for its answer', async () => {
		// the ledger's wait for an earlier answer starts with a sleep until its deadline: seeing that
		// sleep begin is what shows the retry is waiting (no fixed pause decides it)
		const outer = clock();
		let answerWaits = 0;
		const restore = useClock({
			now: () => outer.now(),
			sleep: async (ms, signal) => {
				if (ms > WAIT_FOR_EARLIER_ANSWER_MS / 2) answerWaits++;
				return await outer.sleep(ms, signal);
			},
		});
		try {
			for (const [answer, expected] of [
				[200, 0],
				[500, 1],
			] as const) {
				const rawBody = freshBody(`in-flight-${answer}`);
				const inFlight = await deliver(a, signedFor(a, rawBody), rawBody, undefined, 'later');
				expect(started(inFlight)).toBe(1);
				let settled = false;
				const waitsBefore = answerWaits;
				const retryRun = deliver(a, signedFor(a, rawBody), rawBody).then((run) => {
					settled = true;
					return run;
				});
				while (answerWaits === waitsBefore && !settled)
					await new Promise((resolve) => setTimeout(resolve, 20));
				expect(settled).toBe(false);
				expect(answerWaits).toBe(waitsBefore + 1);
				inFlight.answer(answer);
				expect(started(await retryRun)).toBe(expected);
			}
		} finally {
			restore();
		}
	});

	test('a redispatch (new send time and delivery id, same payload) of one that ran is acknowledged', async () => {
		const rawBody = freshBody('redispatched');
		expect(started(await deliver(a, signedFor(a, rawBody), rawBody))).toBe(1);
		const again = redispatchOf(rawBody, 'f3b5a2c0-redispatch');
		const repeated = await deliver(a, signedFor(a, again), again);
		expect(started(repeated)).toBe(0);
		expect(repeated.webhookResponse.webhookResponse).toMatchObject({ repeated: true });
	});

	test('another n8n process, with a memory of its own, recognises it from the stored static data', async () => {
		const rawBody = freshBody('two-processes');
		expect(started(await deliver(a, signedFor(a, rawBody), rawBody))).toBe(1);
		const shared = stored(a);
		expect(sharedDeliveries(shared).size).toBeGreaterThan(0);

		const restore = useLedgers(new ProcessLedgers());
		try {
			// the retry lands on the other process
			expect(started(await deliver(a, signedFor(a, rawBody), rawBody))).toBe(0);
			// which still runs what it has not seen
			const other = freshBody('two-processes-other');
			expect(started(await deliver(a, signedFor(a, other), other))).toBe(1);
		} finally {
			restore();
		}
	});

	test('another event occurrence, or the same one to another subscription (the test URL), is new', async () => {
		const one = freshBody('distinct-1');
		const two = freshBody('distinct-2');
		expect(started(await deliver(a, signedFor(a, one), one))).toBe(1);
		expect(started(await deliver(a, signedFor(a, two), two))).toBe(1);

		const listening = activation({ webhookBaseUrl: 'https://n8n.invalid/repeats', isTest: true });
		await activate(listening);
		expect(stored(listening).subscriptionId).not.toBe(stored(a).subscriptionId);
		const onTestUrl = await runWebhook(trigger, {
			parameters: listening.parameters,
			credentials: listening.credentials,
			staticData: listening.staticData,
			headers: signedFor(listening, one),
			rawBody: one,
			mode: 'manual',
		});
		expect(started(onTestUrl)).toBe(1);
		await hook('delete', listening);
	});

	test('with "Ignore Repeated Deliveries" off, every delivery starts an execution', async () => {
		const rawBody = freshBody('option-off');
		const parameters = {
			event: COMPLETION_CREATED,
			options: { ignoreRepeatedDeliveries: false, recoverMissedDeliveries: false },
		};
		for (let i = 0; i < 3; i++)
			expect(started(await deliver(a, signedFor(a, rawBody), rawBody, parameters))).toBe(1);
	});
});

describe('a redispatch rendered again from the current records (redispatchPayload: current)', () => {
	let a: Activation;
	let subscriptionId: number;
	let learner: { contentId: number; userId: number };
	const started = (run: Awaited<ReturnType<typeof deliver>>) =>
		run.webhookResponse.workflowData?.[0]?.length ?? 0;
	const payloadOf = (attempt: DeliveryAttempt) =>
		(JSON.parse(attempt.body) as { payload: { completion: { user: { email: string } } } }).payload;
	let config: Awaited<ReturnType<typeof t.sandbox.control.getConfig>>;

	beforeAll(async () => {
		a = activation({ webhookBaseUrl: 'https://n8n.invalid/rendered-again' });
		subscriptionId = (await activate(a)).subscriptionId as number;
		learner = await aCourseAndLearner();
		config = await t.sandbox.control.getConfig();
		// one attempt each: n8n.invalid does not resolve, so every attempt is logged as failed
		await t.sandbox.control.setConfig({ deliveryMaxAttempts: 1, redispatchPayload: 'current' });
	});
	afterAll(async () => {
		await t.sandbox.control.setConfig({
			deliveryMaxAttempts: config.deliveryMaxAttempts,
			redispatchPayload: config.redispatchPayload,
		});
		await hook('delete', a);
	});

	test("one that ran (its answer lost) is acknowledged, though the learner's email changed before the redispatch", async () => {
		const sent = await captureDelivery(subscriptionId, () =>
			t.sandbox.control.simulateCompletion(learner),
		);
		// n8n ran it; the platform logged a failure (the answer never reached it)
		expect(started(await deliver(a, sent.headers, Buffer.from(sent.body, 'utf8')))).toBe(1);
		const email = `renamed-${Date.now()}@example.com`;
		await t.sandbox.control.simulateUserUpdate(learner.userId, { email });

		const redispatched = await captureDelivery(subscriptionId, async () => {
			const answer = await t.api('POST', `/${subscriptionId}/logs/${sent.log_id}/redispatch`);
			expect(answer.status).toBe(200);
		});
		// what makes this the case under test: another body, with the new email
		expect(redispatched.delivery_id).not.toBe('');
		expect(payloadOf(redispatched).completion.user.email).toBe(email);
		expect(payloadOf(sent).completion.user.email).not.toBe(email);

		const repeated = await deliver(a, redispatched.headers, Buffer.from(redispatched.body, 'utf8'));
		expect(started(repeated)).toBe(0);
		expect(repeated.webhookResponse.webhookResponse).toEqual({
			received: true,
			passedOn: false,
			repeated: true,
		});
	});

	test('the same record completed again, a second later, is a new occurrence and runs', async () => {
		await t.sandbox.control.advanceClock(2_000);
		const again = await captureDelivery(subscriptionId, () =>
			t.sandbox.control.simulateCompletion(learner),
		);
		expect(started(await deliver(a, again.headers, Buffer.from(again.body, 'utf8')))).toBe(1);
	});
});

describe('replays after the repeat memory is gone (restart, or later than 15 minutes): "Reject Deliveries Older Than"', () => {
	let a: Activation;
	let sent: IDataObject;

	beforeAll(async () => {
		a = activation({ webhookBaseUrl: 'https://n8n.invalid/replays' });
		const kept = await activate(a);
		const { contentId, userId } = await aCourseAndLearner();
		const attempt = await captureDelivery(kept.subscriptionId as number, () =>
			t.sandbox.control.simulateCompletion({ contentId, userId }),
		);
		sent = JSON.parse(attempt.body) as IDataObject;
		// the sandbox stamps `now` with its clock: the send time of a genuine delivery
		expect(Math.abs((sent.now as number) * 1000 - Date.now())).toBeLessThan(60_000);
	});
	afterAll(async () => await hook('delete', a));

	/** A genuine delivery as the platform would sign it, sent `minutesAgo` before now. */
	const signedAt = (minutesAgo: number, marker: string) => {
		const rawBody = Buffer.from(
			JSON.stringify({
				...sent,
				now: Math.floor(Date.now() / 1000) - minutesAgo * 60,
				delivery_id: marker,
			}),
			'utf8',
		);
		const headers = {
			'content-type': 'application/json',
			authorization: `Bearer ${stored(a).authToken as string}`,
			'x-signature': createHmac('sha256', stored(a).signingKey as string)
				.update(rawBody)
				.digest('hex'),
		};
		return { rawBody, headers };
	};
	// repeat memory off: what a restarted n8n process (empty memory) sees
	const withLimit = (minutes?: number) => ({
		event: COMPLETION_CREATED,
		options: {
			ignoreRepeatedDeliveries: false,
			recoverMissedDeliveries: false,
			...(minutes === undefined ? {} : { maxDeliveryAgeMinutes: minutes }),
		},
	});

	test('a signed delivery older than the limit is refused with 400 and starts nothing', async () => {
		const old = signedAt(61, 'replay-61');
		const { webhookResponse, response } = await deliver(a, old.headers, old.rawBody, withLimit(60));
		expect(webhookResponse).toEqual({ noWebhookResponse: true });
		expect(response.statusCode).toBe(400);
		expect(String((JSON.parse(response.body) as IDataObject).message)).toMatch(
			/more than 60 minutes ago.*redispatch/,
		);
	});

	test('within the limit, and a send time ahead of n8n (clock skew), it runs', async () => {
		for (const [minutesAgo, marker] of [
			[59, 'recent-59'],
			[-3, 'skew-ahead'],
		] as const) {
			const recent = signedAt(minutesAgo, marker);
			const run = await deliver(a, recent.headers, recent.rawBody, withLimit(60));
			expect(run.webhookResponse.workflowData?.[0]).toHaveLength(1);
		}
	});

	test('without the option an old delivery still runs; a forged send time fails the signature', async () => {
		const old = signedAt(600, 'old-no-option');
		expect(
			(await deliver(a, old.headers, old.rawBody, withLimit())).webhookResponse.workflowData?.[0],
		).toHaveLength(1);
		// moving `now` forward without the signing key breaks the signature: 401, nothing runs
		const tampered = Buffer.from(
			old.rawBody.toString('utf8').replace(/"now":\d+/, `"now":${Math.floor(Date.now() / 1000)}`),
			'utf8',
		);
		const forged = await deliver(a, old.headers, tampered, withLimit(60));
		expect(forged.response.statusCode).toBe(401);
		expect(forged.webhookResponse.workflowData).toBeUndefined();
	});
});
