/**
 * Recovery under every reading of the platform that the spec leaves open (sandbox switches
 * `deliveryLog`, `redispatchEntry`, `logOrder`, `redispatchPayload`, the retry schedule): a
 * redispatch that went through is never asked for again, a history older than recovery reaches
 * back does not hide the newest failures, a declined redispatch is not asked for again.
 * Deliveries fail while the subscription points at https://n8n.invalid (failed at once, as when
 * n8n is down); then it points at a local receiver that answers 200, as n8n back up.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { IDataObject } from 'n8n-workflow';

import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import {
	RECOVERY_HORIZON_MS,
	SETTLE_MS,
} from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';
import {
	redispatchesOf,
	resetRedispatchMemory,
	shareRedispatches,
	type Redispatches,
} from '../../nodes/LearningPlatformTrigger/recovery/redispatchMemory';
import { deliveryLogApi } from '../../nodes/LearningPlatformTrigger/recovery/host';
import { recoverMissedDeliveries } from '../../nodes/LearningPlatformTrigger/recovery/run';
import {
	resetRecoveryState,
	RESCAN_INTERVAL_MS,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { DEFAULT_CONFIG } from '../../sandbox/store';
import { makeCertificates, type Certificates } from '../../scripts/n8n/tls-front';
import { withAheadClock } from '../support/fakeClock';
import { hookContext, runHook, runWebhook } from '../support/n8n';
import { exchangeElsewhere, withPair } from '../transport/helpers';
import {
	askedEntriesOf,
	DELIVERY_TIMEOUT_MS,
	GIVE_UP_MS,
	platformReading,
	redispatchRequestsOf,
	setUpTriggerTests,
	type TriggerTestContext,
} from './setup';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const HOUR = 60 * 60_000;

jest.setTimeout(120_000);

const trigger = new LearningPlatformTrigger();
let t: TriggerTestContext;
let receiver: Server;
let receiverUrl: string;
let certificates: Certificates;
/** what the receiver got, as n8n back up would: per subscription (the path ends with its id) */
const received: Array<{ path: string; delivery_id: string }> = [];
const receivedBy = (subscriptionId: number) =>
	received.filter((r) => r.path.endsWith(`/${subscriptionId}`)).length;

beforeAll(async () => {
	// an https n8n of the tests' own (the trigger subscribes https URLs only), trusted by the platform
	certificates = await makeCertificates(
		path.join(os.tmpdir(), `lp-recovery-readings-${process.pid}`),
	);
	t = await setUpTriggerTests('recovery-readings', { trustedCaPem: certificates.caCertPem });
	receiver = createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString()));
		req.on('end', () => {
			const { delivery_id } = JSON.parse(body) as { delivery_id: string };
			received.push({ path: req.url ?? '', delivery_id });
			res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
	receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/n8n-back-up`;
});
afterAll(async () => {
	await t.sandbox.control.setConfig({
		deliveryLog: 'perDelivery',
		redispatchEntry: 'marks',
		logOrder: 'newestFirst',
	});
	await new Promise((resolve) => receiver.close(resolve));
	await t.close();
});

let paths = 0;

/**
 * A request listener standing in for n8n's webhook server: each request's headers (as strings)
 * and exact bytes go to `answer`, whose status is sent back.
 */
function servingN8n(
	answer: (request: { headers: Record<string, string>; rawBody: Buffer }) => Promise<number>,
) {
	return (req: IncomingMessage, res: ServerResponse) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const headers = Object.fromEntries(
				Object.entries(req.headers).map(([k, v]) => [k, String(v)]),
			);
			void answer({ headers, rawBody: Buffer.concat(chunks) }).then((status) => {
				res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
			});
		});
	};
}

/**
 * An http n8n with the trigger of `workflow()` (recovery off): `answerFirst` may answer a request
 * itself (n8n busy); otherwise the trigger serves it. Keeps each status answered and counts the
 * executions started.
 */
async function n8nRunningTheTrigger(
	answerFirst: () => number | undefined,
	workflow: () => { staticData: IDataObject },
) {
	const parameters = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: false } };
	const served = { answers: [] as number[], executions: 0 };
	const server = createServer(
		servingN8n(async ({ headers, rawBody }) => {
			let status = answerFirst();
			if (status === undefined) {
				const run = await runWebhook(trigger, {
					parameters,
					credentials: t.credentials,
					staticData: workflow().staticData,
					headers,
					rawBody,
				});
				served.executions += run.webhookResponse.workflowData?.[0]?.length ?? 0;
				status = run.response.statusCode;
			}
			served.answers.push(status);
			return status;
		}),
	);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/n8n`,
		served,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

/** A subscription whose deliveries fail (n8n down), and a hook context of its workflow. */
async function subscribed() {
	const path = `readings-${++paths}`;
	const staticData: IDataObject = {};
	const parameters = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: false } };
	const options = {
		parameters,
		credentials: t.credentials,
		staticData,
		webhookBaseUrl: `https://n8n.invalid/${path}`,
	};
	await runHook(trigger, 'create', options);
	const subscriptionId = (staticData[NODE_KEY] as IDataObject).subscriptionId as number;
	return { subscriptionId, staticData, context: hookContext(trigger, options) };
}

/** A subscription as `subscribed()` makes, whose deliveries then go to the n8n at `n8nUrl`. */
async function subscribedTo(n8nUrl: string) {
	const active = await subscribed();
	const { subscriptionId } = active;
	const answer = await t.api('PATCH', `/${subscriptionId}`, { url: `${n8nUrl}/${subscriptionId}` });
	expect(answer.status).toBe(200);
	return active;
}

async function missedDeliveries(subscriptionId: number, count: number) {
	const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
	for (let i = 0; i < count; i += 20)
		await Promise.all(
			Array.from({ length: Math.min(20, count - i) }, () =>
				t.sandbox.control.simulateCompletion({}),
			),
		);
	await t.sandbox.control.waitForDeliveries({ subscriptionId }, before + count, 30_000);
	// missed means the platform gave up: a retry still to come would reach n8n once it is back
	await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
}

/** n8n is back up: the subscription now points at the receiver. */
async function backUp(subscriptionId: number) {
	let answer = await t.api('PATCH', `/${subscriptionId}`, {
		url: `${receiverUrl}/${subscriptionId}`,
	});
	if (answer.status === 401) {
		// the API key's 24 hours are over on the platform's moved clock: rotate, as n8n would
		const data = t.credentials.data;
		const { json } = await exchangeElsewhere(t.sandbox, t.username, data.refreshToken as string);
		t.credentials.replace(withPair(data, json, json.expires_in * 1000));
		answer = await t.api('PATCH', `/${subscriptionId}`, {
			url: `${receiverUrl}/${subscriptionId}`,
		});
	}
	expect(answer.status).toBe(200);
}

/** How far the platform's clock is ahead of the wall clock (tests move it): n8n's clock follows. */
async function platformAhead(): Promise<number> {
	return (await t.sandbox.control.getClock()).now - Date.now();
}

const redispatchRequests = (subscriptionId: number) =>
	redispatchRequestsOf(t.sandbox, subscriptionId);

// First in the file, so its deliveries go to its own subscription only (deleted at the end).
describe.each(['newestFirst', 'oldestFirst'] as const)(
	'failures deep in the log (%s)',
	(logOrder) => {
		test('are read again on their own pages before each redispatch, not from the newest down', async () => {
			await t.sandbox.control.setConfig({
				deliveryLog: 'perDelivery',
				redispatchEntry: 'marks',
				logOrder,
				allowHttpWebhookUrls: true,
				// the 300 deliveries must go through: on a loaded machine the set-up's 1 s is too short
				deliveryTimeoutMs: 15_000,
			});
			const { subscriptionId, context } = await subscribed();
			const failed = 20;
			await missedDeliveries(subscriptionId, failed);
			await backUp(subscriptionId);
			// three pages of deliveries that went through, newer than the failures
			await missedDeliveries(subscriptionId, 300);
			const ahead = await platformAhead();
			await withAheadClock(async (time) => {
				time.offset = ahead + SETTLE_MS + 1_000;
				const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
				expect(run).toMatchObject({ redispatched: failed, failed: 0 });
				// 4 pages read once; then each redispatch reads its one or two pages again (reading
				// from the newest down would cost 4 or 5 pages each: 4 + 20 x 4 + 20 = 104 at least)
				expect(run.requests).toBeLessThanOrEqual(4 + 1 + failed * 2 + failed);
			});
			expect((await t.api('DELETE', `/${subscriptionId}`)).status).toBe(204);
			await t.sandbox.control.setConfig({ deliveryTimeoutMs: DELIVERY_TIMEOUT_MS });
		});
	},
);

/**
 * One entry per attempt means something only where the platform retries: there each delivery gets
 * the sandbox's default schedule (3 attempts, 200 ms doubling), failing at every one.
 */
const attemptsFor = (deliveryLog: 'perDelivery' | 'perAttempt') => {
	const { deliveryMaxAttempts, deliveryBackoffMs } =
		deliveryLog === 'perAttempt' ? DEFAULT_CONFIG : platformReading;
	return { deliveryMaxAttempts, deliveryBackoffMs };
};

const orders = (['perDelivery', 'perAttempt'] as const).flatMap((deliveryLog) =>
	(['newestFirst', 'oldestFirst'] as const).map((logOrder) => ({
		deliveryLog,
		logOrder,
		...attemptsFor(deliveryLog),
	})),
);

// First in the file: every completion is delivered to every subscription made so far.
describe.each(orders)('log $deliveryLog, $logOrder', (reading) => {
	beforeAll(async () => {
		await t.sandbox.control.setConfig({ ...reading, allowHttpWebhookUrls: true });
	});

	test('after a history older than recovery reaches back (more than a page), an outage is recovered from the newest entries', async () => {
		const { subscriptionId, context } = await subscribed();
		await missedDeliveries(subscriptionId, 101);
		await t.sandbox.control.advanceClock(RECOVERY_HORIZON_MS + HOUR);
		await missedDeliveries(subscriptionId, 3);
		await backUp(subscriptionId);

		const ahead = await platformAhead();
		await withAheadClock(async (time) => {
			time.offset = ahead + SETTLE_MS + 1_000;
			const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
			expect(run).toMatchObject({ redispatched: 3, failed: 0 });
		});
		const asked = await askedEntriesOf(t.sandbox, subscriptionId);
		const log = (await t.api('GET', `/${subscriptionId}/logs?perPage=100&page=1`)).body as {
			meta: { total: number };
		};
		expect(log.meta.total).toBeGreaterThanOrEqual(104);
		// the three newest deliveries' entries (any of their attempts), not any of the day-old ones
		const attempts = await t.sandbox.control.deliveries({ subscriptionId });
		const newestDeliveries = [...new Set(attempts.map((d) => d.delivery_ref))].slice(-3);
		const newest = attempts
			.filter((d) => newestDeliveries.includes(d.delivery_ref))
			.map((d) => d.log_id);
		expect(asked).toHaveLength(3);
		for (const id of asked) expect(newest).toContain(id);
	});
});

const readings = (['perDelivery', 'perAttempt'] as const).flatMap((deliveryLog) =>
	(['marks', 'flagOnly', 'untouched'] as const).flatMap((redispatchEntry) =>
		(['newestFirst', 'oldestFirst'] as const).map((logOrder) => ({
			deliveryLog,
			redispatchEntry,
			logOrder,
			...attemptsFor(deliveryLog),
		})),
	),
);

describe.each(readings)('log $deliveryLog, redispatch $redispatchEntry, $logOrder', (reading) => {
	beforeAll(async () => {
		await t.sandbox.control.setConfig({ ...reading, allowHttpWebhookUrls: true });
	});
	beforeEach(() => resetRedispatchMemory());

	test('deliveries redispatched once are not asked for again 9 hours later, in this process or after a restart', async () => {
		const { subscriptionId, staticData, context } = await subscribed();
		await missedDeliveries(subscriptionId, 2);
		await backUp(subscriptionId);
		const asked: Redispatches = new Map();

		const ahead = await platformAhead();
		await withAheadClock(async (time) => {
			time.offset = ahead + SETTLE_MS + 1_000;
			const first = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				asked,
			);
			expect(first).toMatchObject({ redispatched: 2, failed: 0 });
		});
		await t.sandbox.control.waitUntilDeliveriesSettled(10_000);
		expect(receivedBy(subscriptionId)).toBe(2);

		// the memory as a new delivery's save carries it, then the process restarts
		const scope = `${context.getWorkflow().id ?? ''}:${context.getNode().id}`;
		for (const [id, seen] of asked) redispatchesOf(scope, subscriptionId).set(id, seen);
		shareRedispatches(scope, staticData, subscriptionId, Date.now(), true);
		resetRedispatchMemory();
		shareRedispatches(scope, staticData, subscriptionId, Date.now(), false);
		const restored = redispatchesOf(scope, subscriptionId);
		expect([...restored.keys()].sort()).toEqual([...asked.keys()].sort());

		await withAheadClock(async (time) => {
			time.offset = ahead + 9 * HOUR;
			const sameProcess = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				asked,
			);
			expect(sameProcess).toMatchObject({ redispatched: 0, failed: 0 });
			const afterRestart = await recoverMissedDeliveries(
				deliveryLogApi(context),
				subscriptionId,
				undefined,
				restored,
			);
			expect(afterRestart).toMatchObject({ redispatched: 0, failed: 0 });
		});
		expect(await redispatchRequests(subscriptionId)).toHaveLength(2);
		expect(receivedBy(subscriptionId)).toBe(2);
	});
});

test('a redispatch the platform declines (the payload model is gone) is not asked for again', async () => {
	await t.sandbox.control.setConfig({
		deliveryLog: 'perDelivery',
		redispatchEntry: 'marks',
		logOrder: 'newestFirst',
	});
	const { subscriptionId, context } = await subscribed();
	await missedDeliveries(subscriptionId, 1);
	const [delivery] = await t.sandbox.control.deliveries({ subscriptionId });
	const userId = (JSON.parse(delivery.body) as { payload: { completion: { user_id: number } } })
		.payload.completion.user_id;
	await t.sandbox.control.simulateUserDeletion(userId);
	const asked: Redispatches = new Map();
	const ahead = await platformAhead();
	await withAheadClock(async (time) => {
		time.offset = ahead + SETTLE_MS + 1_000;
		const first = await recoverMissedDeliveries(
			deliveryLogApi(context),
			subscriptionId,
			undefined,
			asked,
		);
		expect(first).toMatchObject({ redispatched: 0, failed: 1 });
		time.offset = ahead + 9 * HOUR;
		const later = await recoverMissedDeliveries(
			deliveryLogApi(context),
			subscriptionId,
			undefined,
			asked,
		);
		expect(later).toMatchObject({ redispatched: 0, failed: 0 });
	});
	expect(await redispatchRequests(subscriptionId)).toHaveLength(1);
});

// The spec shows no retry schedule. A platform that retries after longer than the settle time
// (30 s unchanged) races the redispatch: both arrive, and the repeat memory runs one.
describe.each([
	{ deliveryLog: 'perDelivery', redispatchEntry: 'marks', redispatchPayload: 'original' },
	{ deliveryLog: 'perAttempt', redispatchEntry: 'untouched', redispatchPayload: 'current' },
] as const)(
	'retries later than the settle time (log $deliveryLog, redispatch $redispatchEntry, payload $redispatchPayload)',
	(reading) => {
		let n8n: Awaited<ReturnType<typeof n8nRunningTheTrigger>>;
		let busy = true;
		let active: Awaited<ReturnType<typeof subscribed>>;

		beforeAll(async () => {
			await t.sandbox.control.setConfig({
				...reading,
				logOrder: 'newestFirst',
				deliveryMaxAttempts: 2,
				deliveryBackoffMs: 4_000,
				allowHttpWebhookUrls: true,
			});
			// n8n with the trigger: busy (503, nothing run) for the first attempt, then running it
			n8n = await n8nRunningTheTrigger(
				() => (busy ? 503 : undefined),
				() => active,
			);
		});
		afterAll(async () => await n8n.close());
		beforeEach(() => resetRedispatchMemory());

		test("a delivery redispatched before the platform's late retry runs once", async () => {
			active = await subscribedTo(n8n.url);
			const { subscriptionId, context } = active;
			await t.sandbox.control.simulateCompletion({});
			// the first attempt met a busy n8n; the platform's retry is 4 s away
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, 1, 10_000);
			busy = false;
			const ahead = await platformAhead();
			await withAheadClock(async (time) => {
				// a run that judges the entry settled (unchanged for the settle time) before the retry
				time.offset = ahead + SETTLE_MS + 1_000;
				const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
				expect(run).toMatchObject({ redispatched: 1, failed: 0 });
			});
			// the redispatch and the late retry both reach n8n
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, 3, 20_000);
			expect(n8n.served.answers).toEqual([503, 200, 200]);
			expect(n8n.served.executions).toBe(1);
			const attempts = await t.sandbox.control.deliveries({ subscriptionId });
			expect(new Set(attempts.map((a) => a.delivery_ref)).size).toBe(1);
		});
	},
);

/**
 * Within a describe: a platform that does not retry a 404 (the log and redispatch of `reading`, 2
 * attempts `backoffMs` apart), and a stand-in n8n that answers from `busyAnswers` while it has any,
 * then runs the trigger of the subscription `subscribe()` made last.
 */
function notRetrying404(reading: {
	deliveryLog: 'perDelivery' | 'perAttempt';
	redispatchEntry: 'marks' | 'flagOnly' | 'untouched';
	backoffMs: number;
}) {
	let active: Awaited<ReturnType<typeof subscribed>>;
	const platform = {
		n8n: undefined as unknown as Awaited<ReturnType<typeof n8nRunningTheTrigger>>,
		busyAnswers: [] as number[],
		subscribe: async () => (active = await subscribedTo(platform.n8n.url)),
	};
	beforeAll(async () => {
		await t.sandbox.control.setConfig({
			deliveryLog: reading.deliveryLog,
			redispatchEntry: reading.redispatchEntry,
			logOrder: 'newestFirst',
			deliveryNoRetryStatuses: [404],
			deliveryMaxAttempts: 2,
			deliveryBackoffMs: reading.backoffMs,
			allowHttpWebhookUrls: true,
		});
		platform.n8n = await n8nRunningTheTrigger(
			() => platform.busyAnswers.shift(),
			() => active,
		);
	});
	afterAll(async () => {
		await platform.n8n.close();
		const { deliveryLog, deliveryNoRetryStatuses } = platformReading;
		await t.sandbox.control.setConfig({ deliveryLog, deliveryNoRetryStatuses });
	});
	beforeEach(() => resetRedispatchMemory());
	return platform;
}

// The spec shows no retry schedule and no answers left unretried. With one entry per delivery, a
// later delivery that went through on its second try has `tries` 2 and was logged after the first
// delivery's 404: by `tries` and time it could be that 404's retry. With retries 6 s apart its
// span shows it is not; with retries 200 ms apart only its answer does (a 200, not a 404).
describe.each([
	{ redispatchEntry: 'marks', backoffMs: 6_000 },
	{ redispatchEntry: 'untouched', backoffMs: 6_000 },
	{ redispatchEntry: 'marks', backoffMs: 200 },
	{ redispatchEntry: 'untouched', backoffMs: 200 },
] as const)(
	'a platform that does not retry a 404 (log perDelivery, redispatch $redispatchEntry, retries $backoffMs ms apart)',
	({ redispatchEntry, backoffMs }) => {
		const platform = notRetrying404({ deliveryLog: 'perDelivery', redispatchEntry, backoffMs });

		test('the 404 is redispatched beside a later delivery that went through on its second try', async () => {
			const { n8n, busyAnswers } = platform;
			const active = await platform.subscribe();
			const { subscriptionId, context } = active;
			// the first completion meets a 404 (not retried); the second a 503, then its retry runs
			busyAnswers.push(404, 503);
			await t.sandbox.control.simulateCompletion({});
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, 1, 10_000);
			await t.sandbox.control.simulateCompletion({});
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, 3, 20_000);
			expect(n8n.served).toEqual({ answers: [404, 503, 200], executions: 1 });

			const ahead = await platformAhead();
			await withAheadClock(async (time) => {
				time.offset = ahead + SETTLE_MS + 1_000;
				const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
				expect(run).toMatchObject({ redispatched: 1, failed: 0 });
			});
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, 4, 20_000);
			expect(n8n.served).toEqual({ answers: [404, 503, 200, 200], executions: 2 });
			const [first] = await t.sandbox.control.deliveries({ subscriptionId });
			expect(await askedEntriesOf(t.sandbox, subscriptionId)).toEqual([first.log_id]);
		});
	},
);

// With one entry per attempt, a 404 the platform does not retry, logged between another delivery's
// 503 and that delivery's retry, is by `tries` and time as much that retry's first attempt as the
// 503 is: the answers differ, so the platform may have left either unretried.
describe.each(['marks', 'flagOnly', 'untouched'] as const)(
	'a platform that does not retry a 404 (log perAttempt, redispatch %s, retries 6 s apart)',
	(redispatchEntry) => {
		const platform = notRetrying404({
			deliveryLog: 'perAttempt',
			redispatchEntry,
			backoffMs: 6_000,
		});

		test("the 404 between another delivery's 503 and its retry is redispatched, and neither is asked for again", async () => {
			const { n8n, busyAnswers } = platform;
			const active = await platform.subscribe();
			const { subscriptionId, context } = active;
			const asked: Redispatches = new Map();
			// n8n's clock as the platform's (tests before moved it), so the delivery ledger judges
			// the retry and the redispatches on one time line
			const ahead = await platformAhead();
			await withAheadClock(async (time) => {
				time.offset = ahead;
				// the first completion meets a 503, the second a 404 (not retried), then the first's
				// retry runs
				busyAnswers.push(503, 404);
				await t.sandbox.control.simulateCompletion({});
				await t.sandbox.control.waitForDeliveries({ subscriptionId }, 1, 10_000);
				await t.sandbox.control.simulateCompletion({});
				await t.sandbox.control.waitForDeliveries({ subscriptionId }, 3, 20_000);
				expect(n8n.served).toEqual({ answers: [503, 404, 200], executions: 1 });
				const [first, notRetried] = await t.sandbox.control.deliveries({ subscriptionId });

				time.offset = ahead + SETTLE_MS + 1_000;
				const run = await recoverMissedDeliveries(
					deliveryLogApi(context),
					subscriptionId,
					undefined,
					asked,
				);
				expect(run).toMatchObject({ redispatched: 2, failed: 0 });
				// the 503's redispatch is a repeat of the retry that ran; the 404's runs
				await t.sandbox.control.waitForDeliveries({ subscriptionId }, 5, 20_000);
				expect(n8n.served).toEqual({ answers: [503, 404, 200, 200, 200], executions: 2 });
				expect(await askedEntriesOf(t.sandbox, subscriptionId)).toEqual([
					first.log_id,
					notRetried.log_id,
				]);

				time.offset = ahead + HOUR;
				const later = await recoverMissedDeliveries(
					deliveryLogApi(context),
					subscriptionId,
					undefined,
					asked,
				);
				expect(later).toMatchObject({ redispatched: 0, failed: 0 });
			});
		});
	},
);

// In queue mode n8n's main process runs recovery after activation and on its schedule, but serves
// no delivery whose static data n8n would save with what it asked for. Under a platform that
// leaves a redispatched entry untouched, only that memory tells a redispatch was asked for.
describe.each([
	{ deliveryLog: 'perDelivery', redispatchEntry: 'marks' },
	{ deliveryLog: 'perAttempt', redispatchEntry: 'flagOnly' },
	{ deliveryLog: 'perAttempt', redispatchEntry: 'untouched' },
	{ deliveryLog: 'perDelivery', redispatchEntry: 'untouched' },
] as const)(
	'a process that serves no delivery (log $deliveryLog, redispatch $redispatchEntry)',
	(reading) => {
		let n8n: HttpsServer;
		let n8nUrl: string;
		let down = true;
		/** the static data as n8n's database holds it: written by the saves of the requests served */
		const database: IDataObject = {};
		const noteAnswers: number[] = [];
		const recovering = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: true } };

		beforeAll(async () => {
			await t.sandbox.control.setConfig({
				...reading,
				logOrder: 'newestFirst',
				deliveryMaxAttempts: 1,
				allowHttpWebhookUrls: true,
			});
			// n8n's webhook processes: the platform's deliveries fail while n8n is down; a note of
			// the trigger's own goes to the trigger, on the static data from the database
			n8n = createHttpsServer(
				{ key: certificates.keyPem, cert: certificates.certPem },
				servingN8n(async ({ headers, rawBody }) => {
					if (headers['x-learning-platform-note'] === undefined) return down ? 503 : 200;
					const run = await runWebhook(trigger, {
						parameters: recovering,
						credentials: t.credentials,
						staticData: database,
						headers,
						rawBody,
					});
					noteAnswers.push(run.response.statusCode);
					return run.response.statusCode;
				}),
			);
			await new Promise<void>((resolve) => n8n.listen(0, '127.0.0.1', resolve));
			n8nUrl = `https://127.0.0.1:${(n8n.address() as AddressInfo).port}`;
		});
		afterAll(async () => await new Promise((resolve) => n8n.close(resolve)));

		test('learns what it asked for to the others through a note: after a restart of every process, nothing is asked for again', async () => {
			resetRecoveryState();
			const activation: IDataObject = {};
			const options = {
				credentials: t.credentials,
				staticData: activation,
				webhookBaseUrl: `${n8nUrl}/note-${++paths}`,
			};
			await runHook(trigger, 'create', {
				...options,
				parameters: { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: false } },
			});
			const subscriptionId = (activation[NODE_KEY] as IDataObject).subscriptionId as number;
			await missedDeliveries(subscriptionId, 2);
			down = false;

			const ahead = await platformAhead();
			await withAheadClock(async (time) => {
				time.offset = ahead + SETTLE_MS + 1_000;
				// the main process activates the workflow; n8n saves its static data once, then
				const { result } = await runHook(trigger, 'checkExists', {
					...options,
					parameters: recovering,
				});
				expect(result).toBe(true);
				Object.assign(database, JSON.parse(JSON.stringify(activation)) as IDataObject);
				// its run in the background asks for both; then its note reaches a webhook process
				const deadline = Date.now() + 30_000;
				while (noteAnswers.length === 0 && Date.now() < deadline)
					await new Promise((resolve) => setTimeout(resolve, 100));
			}, RESCAN_INTERVAL_MS);
			expect(noteAnswers).toEqual([200]);
			expect(await redispatchRequests(subscriptionId)).toHaveLength(2);

			// every process restarts; a webhook process's run, 9 hours on, knows what the database held
			resetRecoveryState();
			const context = hookContext(trigger, {
				...options,
				staticData: database,
				parameters: recovering,
			});
			const scope = `${context.getWorkflow().id ?? ''}:${context.getNode().id}`;
			shareRedispatches(
				scope,
				database[NODE_KEY] as IDataObject,
				subscriptionId,
				Date.now(),
				false,
			);
			await withAheadClock(async (time) => {
				time.offset = ahead + 9 * HOUR;
				const run = await recoverMissedDeliveries(
					deliveryLogApi(context),
					subscriptionId,
					undefined,
					redispatchesOf(scope, subscriptionId),
				);
				expect(run).toMatchObject({ redispatched: 0, failed: 0 });
			});
			expect(await redispatchRequests(subscriptionId)).toHaveLength(2);
		});
	},
);
