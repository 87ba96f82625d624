/**
 * The note one n8n process's recovery run sends to the trigger's own webhook (what it asked the
 * platform to redispatch), as the webhook process that serves it sees it: taken in and written to
 * the static data n8n saves only when signed with the subscription's key and about it; never an
 * execution. The sending side, against the sandbox: recoveryReadings.test.ts.
 */
import { createHmac } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';

import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import {
	redispatchesOf,
	resetRedispatchMemory,
} from '../../nodes/LearningPlatformTrigger/recovery/redispatchMemory';
import { runWebhook } from '../support/n8n';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const SUBSCRIPTION_ID = 4242;
const SIGNING_KEY = 'b'.repeat(64);
/** the node as the test harness names it (workflow id, node id) */
const SCOPE = 'wf-under-test:node-under-test';
const trigger = new LearningPlatformTrigger();

function storedSubscription(): IDataObject {
	return {
		[NODE_KEY]: {
			subscriptionId: SUBSCRIPTION_ID,
			signingKey: SIGNING_KEY,
			authToken: 'c'.repeat(64),
			event: COMPLETION_CREATED,
			url: 'https://n8n.invalid/webhook/x',
		},
	};
}

/** as the sender renders it: entries 26 (1 try) and 43 (2 tries), asked for a minute ago */
const MINUTE = Math.floor(Date.now() / 60_000) - 1;
const ENTRIES = `${SUBSCRIPTION_ID.toString(36)} q.1.${MINUTE.toString(36)} 17.2.${MINUTE.toString(36)}`;

function note(body: object, key = SIGNING_KEY, kind = 'redispatched-entries') {
	const rawBody = Buffer.from(JSON.stringify(body));
	return {
		rawBody,
		headers: {
			'content-type': 'application/json',
			'x-signature': createHmac('sha256', key).update(rawBody).digest('hex'),
			'x-learning-platform-note': kind,
		},
	};
}

async function serve(
	request: { rawBody: Buffer; headers: Record<string, string> },
	recover = true,
) {
	const staticData = storedSubscription();
	const run = await runWebhook(trigger, {
		...request,
		parameters: { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: recover } },
		staticData,
		workflowId: 'wf-under-test',
	});
	return { ...run, stored: staticData[NODE_KEY] as IDataObject };
}

beforeEach(() => resetRedispatchMemory());

test('a note signed with the subscription key is taken in and saved, starting no execution', async () => {
	const { webhookResponse, response, stored } = await serve(
		note({ subscription_id: SUBSCRIPTION_ID, entries: ENTRIES }),
	);
	expect(response.statusCode).toBe(200);
	expect(webhookResponse.workflowData).toBeUndefined();
	expect(webhookResponse.webhookResponse).toEqual({ received: true, passedOn: false });
	expect(stored.redispatchedEntries).toBe(ENTRIES);
	expect([...redispatchesOf(SCOPE, SUBSCRIPTION_ID)]).toEqual([
		[26, { tries: 1, at: MINUTE * 60_000 }],
		[43, { tries: 2, at: MINUTE * 60_000 }],
	]);
});

test.each([
	[
		'signed with another key',
		note({ subscription_id: SUBSCRIPTION_ID, entries: ENTRIES }, 'x'.repeat(64)),
	],
	[
		'unsigned',
		{
			...note({ subscription_id: SUBSCRIPTION_ID, entries: ENTRIES }),
			headers: {
				'content-type': 'application/json',
				'x-learning-platform-note': 'redispatched-entries',
			},
		},
	],
])('a note %s is refused (401), nothing taken in', async (_name, request) => {
	const { webhookResponse, response, stored } = await serve(request);
	expect(response.statusCode).toBe(401);
	expect(webhookResponse.workflowData).toBeUndefined();
	expect(stored.redispatchedEntries).toBeUndefined();
	expect(redispatchesOf(SCOPE, SUBSCRIPTION_ID).size).toBe(0);
});

test.each([
	[
		'about another subscription',
		note({ subscription_id: 7, entries: `7 q.1.${MINUTE.toString(36)}` }),
		true,
	],
	[
		'to a trigger that recovers nothing',
		note({ subscription_id: SUBSCRIPTION_ID, entries: ENTRIES }),
		false,
	],
])('a signed note %s is acknowledged and ignored', async (_name, request, recover) => {
	const { webhookResponse, response, stored } = await serve(request, recover);
	expect(response.statusCode).toBe(200);
	expect(webhookResponse.workflowData).toBeUndefined();
	expect(stored.redispatchedEntries).toBeUndefined();
	expect(redispatchesOf(SCOPE, SUBSCRIPTION_ID).size).toBe(0);
});
