/**
 * n8n keeps running but the platform cannot reach it for days (an expired certificate, a firewall
 * rule): recovery must not redispatch the same completions again and again, nor spend the API key
 * on them, and must recover every one once the platform reaches n8n again. An https n8n of the
 * test's own runs the trigger; while "unreachable" it drops every connection, as a firewall does.
 * Three days pass on moved clocks (n8n's and the platform's), one 15-minute check at a time. Runs
 * under every reading of the platform (LP_SANDBOX_READING, scripts/run-tests.js).
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
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
	resetRecoveryState,
	RESCAN_INTERVAL_MS,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { resetDeliveryLedger } from '../../nodes/LearningPlatformTrigger/deliveries/processLedgers';
import { retireAllNow } from '../../nodes/LearningPlatformTrigger/subscription/retirement';
import { useClock } from '../../nodes/shared/transport/clock';
import { makeCertificates } from '../../scripts/n8n/tls-front';
import { AheadClock } from '../support/fakeClock';
import {
	recoveryIdle,
	recoveryRequests as harnessRecoveryRequests,
	recoveryRequestsSettled as harnessRecoveryRequestsSettled,
} from '../support/recoveryHarness';
import { runHook, runWebhook } from '../support/n8n';
import {
	DELIVERY_TIMEOUT_MS,
	GIVE_UP_MS,
	platformReading,
	setUpTriggerTests,
	type TriggerTestContext,
} from './setup';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const RECOVERING = { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: true } };
const DAY = 24 * 60 * 60_000;
const CHECKS_A_DAY = DAY / RESCAN_INTERVAL_MS;
/**
 * Three days at the sandbox's defaults; half a day under the other readings (LP_SANDBOX_READING),
 * enough for a run to find the outage, the checks that only ask, and the recovery after it.
 */
const CHECKS = process.env.LP_SANDBOX_READING ? CHECKS_A_DAY / 2 : 3 * CHECKS_A_DAY;
/** a completion every this many checks (two hours): 36 over the three days */
const CHECKS_BETWEEN_COMPLETIONS = 8;

jest.setTimeout(300_000);

const trigger = new LearningPlatformTrigger();
let t: TriggerTestContext;
let n8n: Server;
let n8nUrl: string;
let reachable = false;
/** the workflow's static data as n8n's database holds it */
const database: IDataObject = {};
/**
 * executions started, per completion (its id and when it was completed: the sandbox may complete
 * a learner's course again), and when (n8n's clock) the last one started
 */
const executions = new Map<string, number>();
let lastExecutionAt = 0;
let firstExecutionAt = Infinity;
/** deliveries acknowledged as repeats (the sandbox may complete one course twice alike) */
let repeats = 0;
let time: AheadClock;

beforeAll(async () => {
	const certificates = await makeCertificates(
		path.join(os.tmpdir(), `lp-unreachable-${process.pid}`),
	);
	t = await setUpTriggerTests('unreachable', { trustedCaPem: certificates.caCertPem });
	n8n = createHttpsServer({ key: certificates.keyPem, cert: certificates.certPem }, (req, res) => {
		// a firewall in the way: the connection is dropped before anything is read
		if (!reachable) {
			req.socket.destroy();
			return;
		}
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const headers = Object.fromEntries(
				Object.entries(req.headers).map(([k, v]) => [k, String(v)]),
			);
			const rawBody = Buffer.concat(chunks);
			void runWebhook(trigger, {
				parameters: RECOVERING,
				credentials: t.credentials,
				staticData: database,
				webhookBaseUrl: `${n8nUrl}/unreachable`,
				headers,
				rawBody,
			}).then((run) => {
				if (run.response.body.includes('"repeated":true')) repeats++;
				if (run.webhookResponse.workflowData) {
					const { payload } = JSON.parse(rawBody.toString()) as {
						payload: { completion: { id: number; time_completed?: string } };
					};
					const id = `${payload.completion.id}@${payload.completion.time_completed}`;
					executions.set(id, (executions.get(id) ?? 0) + 1);
					lastExecutionAt = time.now();
					firstExecutionAt = Math.min(firstExecutionAt, lastExecutionAt);
				}
				res.writeHead(run.response.statusCode, { 'content-type': 'application/json' });
				res.end(run.response.body || '{}');
			});
		});
	});
	await new Promise<void>((resolve) => n8n.listen(0, '127.0.0.1', resolve));
	n8nUrl = `https://127.0.0.1:${(n8n.address() as AddressInfo).port}`;
});
afterAll(async () => {
	await retireAllNow();
	n8n.closeAllConnections();
	await new Promise((resolve) => n8n.close(resolve));
	await t.close();
});

/** The trigger's recovery requests so far (recoveryHarness.ts). */
const recoveryRequests = async (subscriptionId: number) =>
	await harnessRecoveryRequests(t.sandbox.control, t.username, subscriptionId);

/**
 * n8n's clock and the platform's, moved together: short waits at once, each 15-minute sleep (the
 * schedule's) until the test lets the next check come (`nextCheck`), or moved by `pass`.
 */
async function movedClocks() {
	time = new AheadClock();
	time.offset = (await t.sandbox.control.getClock()).now - Date.now();
	const gate: { release?: () => void } = {};
	const restore = useClock({
		now: () => time.now(),
		sleep: async (ms: number) => {
			if (ms < RESCAN_INTERVAL_MS) return await time.sleep(ms);
			await new Promise<void>((resolve) => (gate.release = resolve));
			time.offset += ms;
			await t.sandbox.control.advanceClock(ms);
		},
	});
	/** Lets the schedule make its next check, and resolves once it sleeps again after it. */
	const nextCheck = async () => {
		const deadline = Date.now() + 60_000;
		while (gate.release === undefined) {
			if (Date.now() > deadline) throw new Error('the schedule did not come round to sleep');
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
		const release = gate.release;
		gate.release = undefined;
		release();
		while (gate.release === undefined) {
			if (Date.now() > deadline) throw new Error('the check did not end');
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
	};
	/** Time passes on both clocks, the schedule's sleep left as it is. */
	const pass = async (ms: number) => {
		time.offset += ms;
		await t.sandbox.control.advanceClock(ms);
	};
	return { nextCheck, pass, restore };
}

/** The count of those requests once it has stood still for `looks` looks (recoveryHarness.ts). */
const recoveryRequestsSettled = async (subscriptionId: number, looks: number) =>
	await harnessRecoveryRequestsSettled(t.sandbox.control, t.username, subscriptionId, looks);

/**
 * A workflow of this process's (nothing in memory, an empty database) whose trigger has just
 * subscribed at `path`, with `parameters` (recovery off unless they turn it on), n8n reachable.
 */
async function subscribedWorkflow(
	path: string,
	parameters: IDataObject = {
		event: COMPLETION_CREATED,
		options: { recoverMissedDeliveries: false },
	},
) {
	resetRecoveryState();
	for (const key of Object.keys(database)) delete database[key];
	executions.clear();
	repeats = 0;
	const activation = {
		credentials: t.credentials,
		staticData: database,
		webhookBaseUrl: `${n8nUrl}/${path}`,
	};
	reachable = true;
	await runHook(trigger, 'create', { ...activation, parameters });
	const subscriptionId = (database[NODE_KEY] as IDataObject).subscriptionId as number;
	return { activation, subscriptionId };
}

test('unreachable for days while n8n runs: each missed completion redispatched at most once meanwhile, under 100 recovery requests a day; reachable again, every one runs once within 16 minutes', async () => {
	const { activation, subscriptionId } = await subscribedWorkflow('unreachable');
	reachable = false;

	const { nextCheck, restore } = await movedClocks();
	try {
		const { result } = await runHook(trigger, 'checkExists', {
			...activation,
			parameters: RECOVERING,
		});
		expect(result).toBe(true);

		/** when (n8n's clock) each missed completion was made */
		const missedAt: number[] = [];
		const requestsAtDayStart: number[] = [];
		for (let check = 0; check < CHECKS; check++) {
			if (check % CHECKS_A_DAY === 0)
				requestsAtDayStart.push((await recoveryRequests(subscriptionId)).length);
			if (check % CHECKS_BETWEEN_COMPLETIONS === 0) {
				const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
				await t.sandbox.control.simulateCompletion({});
				await t.sandbox.control.waitForDeliveries({ subscriptionId }, before + 1, 10_000);
				missedAt.push(time.now());
				time.offset += SETTLE_MS;
				await t.sandbox.control.advanceClock(SETTLE_MS);
			}
			await nextCheck();
		}
		const requests = await recoveryRequests(subscriptionId);
		const perDay = [...requestsAtDayStart.slice(1), requests.length].map(
			(total, day) => total - requestsAtDayStart[day],
		);
		// a "day" here is 96 checks, at least 24 hours: one question a check once the outage is
		// known; the first day also holds the few runs that found it (their log pages and their
		// redispatches, which failed)
		console.log(`unreachable: recovery requests per day ${perDay.join(', ')}`);
		expect(perDay[0]).toBeLessThanOrEqual(CHECKS_A_DAY + 12);
		expect(Math.max(0, ...perDay.slice(1))).toBeLessThanOrEqual(100);
		const redispatches = requests.filter((r) => r.path.endsWith('/redispatch')).length;
		expect(redispatches).toBeLessThanOrEqual(missedAt.length);
		expect(executions.size).toBe(0);

		// the platform reaches n8n again, with no new completion to tell it: the next check finds it
		reachable = true;
		const backAt = time.now();
		await nextCheck();
		// every completion within recovery's reach (three days and an hour) when the run starts; an
		// older one may run too, once
		const withinReach = missedAt.filter(
			(at) => time.now() - at < RECOVERY_HORIZON_MS - 30 * 60_000,
		).length;
		const missed = missedAt.length;
		const deadline = Date.now() + 60_000;
		while (executions.size < withinReach && Date.now() < deadline)
			await new Promise((resolve) => setTimeout(resolve, 50));
		expect(executions.size).toBeGreaterThanOrEqual(withinReach);
		expect([...executions.values()].every((count) => count === 1)).toBe(true);
		// the check that finds it comes within 16 minutes; its run then goes at recovery's pace
		expect(firstExecutionAt - backAt).toBeLessThanOrEqual(16 * 60_000);
		console.log(
			`unreachable: ${missed} missed, ${withinReach} within reach, ${executions.size} ran, the first ran ${Math.round((firstExecutionAt - backAt) / 60_000)} min and the last ${Math.round((lastExecutionAt - backAt) / 60_000)} min after the platform could reach n8n again`,
		);

		// and no completion runs twice from the checks that follow
		await nextCheck();
		await nextCheck();
		expect([...executions.values()].every((count) => count === 1)).toBe(true);
		await runHook(trigger, 'delete', { ...activation, parameters: RECOVERING });
	} finally {
		restore();
		resetRecoveryState();
	}
}, 900_000);

test('steady traffic with nothing failing: each quarter hour recovery reads only the entries logged since it last looked, one page', async () => {
	const { activation, subscriptionId } = await subscribedWorkflow('steady', RECOVERING);
	const { pass, restore } = await movedClocks();
	// nothing fails: a loaded machine's slow answer is waited for
	await t.sandbox.control.setConfig({ deliveryTimeoutMs: 30_000 });
	try {
		const logReads: number[] = [];
		let made = 0;
		for (let quarter = 0; quarter < 8; quarter++) {
			await pass(RESCAN_INTERVAL_MS);
			const before = (await recoveryRequests(subscriptionId)).length;
			// 60 a quarter hour, about 5,800 a day, spread over it: the first sets a run off, the
			// rest come after it
			await t.sandbox.control.simulateCompletion({});
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, made + 1, 30_000);
			await recoveryRequestsSettled(subscriptionId, 5);
			for (let i = 1; i < 60; i += 20)
				await Promise.all(
					Array.from({ length: Math.min(20, 60 - i) }, () =>
						t.sandbox.control.simulateCompletion({}),
					),
				);
			made += 60;
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, made, 30_000);
			const settled = await recoveryRequestsSettled(subscriptionId, 5);
			logReads.push(settled - before);
		}
		console.log(`steady traffic: log requests per quarter hour ${logReads.join(', ')}`);
		const executed = [...executions.values()].reduce((sum, count) => sum + count, 0);
		expect(executed + repeats).toBe(made);
		// the first quarters read what there is (the log starts empty); later ones only what is
		// new: newest first, one page; oldest first, the page that was the last and, when the new
		// entries run onto the next, that one too
		const mostPages = platformReading.logOrder === 'oldestFirst' ? 2 : 1;
		expect(Math.max(...logReads.slice(2))).toBeLessThanOrEqual(mostPages);
		expect(Math.min(...logReads.slice(2))).toBeGreaterThanOrEqual(1);
		await runHook(trigger, 'delete', { ...activation, parameters: RECOVERING });
	} finally {
		await t.sandbox.control.setConfig({ deliveryTimeoutMs: DELIVERY_TIMEOUT_MS });
		restore();
		resetRecoveryState();
	}
}, 900_000);

test("n8n's database restored from a backup taken before a recovery: a recovered completion does not run again, but where the platform leaves a redispatch's entry untouched (then it does, once more)", async () => {
	const { activation, subscriptionId } = await subscribedWorkflow('restored');
	const { pass, restore } = await movedClocks();
	try {
		reachable = false;
		for (let i = 0; i < 3; i++) {
			const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
			await t.sandbox.control.simulateCompletion({});
			await t.sandbox.control.waitForDeliveries({ subscriptionId }, before + 1, 10_000);
		}
		// missed: the platform has given up on each (its retries, if the reading has any, failed too)
		await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
		await pass(SETTLE_MS + 1_000);
		const backup = JSON.parse(JSON.stringify(database)) as IDataObject;
		reachable = true;
		// n8n back: activation's run recovers the three
		await runHook(trigger, 'checkExists', { ...activation, parameters: RECOVERING });
		const recovered = async (count: number) => {
			const deadline = Date.now() + 30_000;
			while (total() < count && Date.now() < deadline)
				await new Promise((resolve) => setTimeout(resolve, 50));
		};
		const total = () => [...executions.values()].reduce((sum, count) => sum + count, 0);
		await recovered(3);
		expect(total()).toBe(3);
		// and its run has ended (its later passes would otherwise write into the memory the restart
		// below clears): a restarted n8n has nothing of the old process left
		await recoveryIdle();

		// hours later the database is restored from the backup, and n8n starts again: nothing in
		// memory is left
		resetRecoveryState();
		resetDeliveryLedger();
		await pass(3 * 60 * 60_000);
		for (const key of Object.keys(database)) delete database[key];
		Object.assign(database, backup);
		const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
		await t.sandbox.control.simulateCompletion({});
		await t.sandbox.control.waitForDeliveries({ subscriptionId }, before + 1, 10_000);
		// the first delivery after the start sets off a run; it has redispatched what it takes for
		// missed once its requests stop
		await recoveryRequestsSettled(subscriptionId, 10);
		const untouched = platformReading.redispatchEntry === 'untouched';
		// nothing on an untouched entry tells of its redispatch, and the memory of it and the
		// ledger went back with the database (docs/design.md, "Restore from a backup")
		await recovered(untouched ? 7 : 4);
		expect(total()).toBe(untouched ? 7 : 4);
	} finally {
		restore();
		resetRecoveryState();
	}
}, 900_000);

/**
 * Missed completions an hour in the three-day outage test. Where the log holds an entry per
 * attempt, 15 (360 a day) with five attempts each are 5,400 entries, more than a run read before
 * 2026-12-02 (5,000); logged per delivery, 3 an hour do as well (every reading, in less time).
 * The bench's recovery row runs the 1,000 a day (npm run bench).
 */
const OUTAGE_COMPLETIONS_AN_HOUR = Number(
	process.env.LP_OUTAGE_COMPLETIONS_AN_HOUR ??
		(platformReading.deliveryLog === 'perAttempt' ? 15 : 3),
);
const OUTAGE_HOURS = 72;

/** Every n8n process stopped: its port refuses connections. */
async function n8nDown(): Promise<void> {
	n8n.closeAllConnections();
	await new Promise((resolve) => n8n.close(resolve));
}

/** n8n started again, on its port. */
async function n8nUp(): Promise<void> {
	const port = Number(new URL(n8nUrl).port);
	await new Promise<void>((resolve) => n8n.listen(port, '127.0.0.1', resolve));
}

/** Resolves once the platform has made every attempt it means to (none scheduled or under way). */
async function attemptsMade(): Promise<void> {
	const deadline = Date.now() + 30_000;
	while ((await t.sandbox.control.pendingDeliveries()).pending > 0) {
		if (Date.now() > deadline) throw new Error('the platform still has attempts to make');
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}
const ATTEMPTS_PER_DELIVERY = 5;
/** the sandbox's demo tenancy: learners 2-301, courses from 101 (sandbox/demoData.ts) */
const DEMO_FIRST_LEARNER = 2;
const DEMO_LEARNERS = 300;
const DEMO_FIRST_COURSE = 101;

test('n8n down for three days, five attempts per delivery: every completion missed runs once after it, however many entries the log holds', async () => {
	const { subscriptionId } = await subscribedWorkflow('weekend');
	const { nextCheck, pass, restore } = await movedClocks();
	const config = await t.sandbox.control.getConfig();
	await t.sandbox.control.setConfig({
		deliveryMaxAttempts: ATTEMPTS_PER_DELIVERY,
		deliveryBackoffMs: 1,
	});
	// each by another learner or of another course: none repeats another, nor is the same record
	// (a redispatch may send the record as it is now)
	let made = 0;
	const completeAnother = async () => {
		const index = made++;
		await t.sandbox.control.simulateCompletion({
			userId: DEMO_FIRST_LEARNER + (index % DEMO_LEARNERS),
			contentId: DEMO_FIRST_COURSE + Math.floor(index / DEMO_LEARNERS),
		});
	};
	try {
		// every n8n process down: the connection refused, nothing runs, nothing in memory survives
		await n8nDown();
		resetRecoveryState();
		resetDeliveryLedger();
		const before = (await t.sandbox.control.deliveries({ subscriptionId })).length;
		for (let hour = 0; hour < OUTAGE_HOURS; hour++) {
			await Promise.all(
				Array.from({ length: OUTAGE_COMPLETIONS_AN_HOUR }, () => completeAnother()),
			);
			await attemptsMade();
			await pass(60 * 60_000);
		}
		const missed = OUTAGE_HOURS * OUTAGE_COMPLETIONS_AN_HOUR;
		const attempts = (await t.sandbox.control.deliveries({ subscriptionId })).length - before;
		expect(attempts).toBe(missed * ATTEMPTS_PER_DELIVERY);

		// n8n starts again (2.x: no trigger method at start-up); the next completion's delivery
		// sets recovery off, and each 15-minute check goes on while a run stopped at its limits
		await n8nUp();
		const backAt = time.now();
		await completeAnother();
		let checks = 0;
		// a run redispatches at most 100: a check each for the rest, and as many to spare
		while (executions.size < missed + 1 && checks++ < missed / 50) {
			await recoveryRequestsSettled(subscriptionId, 3);
			if (executions.size < missed + 1) await nextCheck();
		}
		const requests = await recoveryRequests(subscriptionId);
		console.log(
			`three days down: ${missed} missed (${attempts} attempts logged), ${executions.size - 1} recovered by ${Math.round((lastExecutionAt - backAt) / 60_000)} min after n8n started, ${requests.length} recovery requests, ${checks} checks`,
		);
		expect(executions.size).toBe(missed + 1);
		expect([...executions.values()].every((count) => count === 1)).toBe(true);
	} finally {
		const { deliveryMaxAttempts, deliveryBackoffMs } = config;
		await t.sandbox.control.setConfig({ deliveryMaxAttempts, deliveryBackoffMs });
		restore();
		resetRecoveryState();
	}
}, 900_000);
