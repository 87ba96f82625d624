/**
 * Recovery's share of the API key against the sandbox's own rate window (60 a minute, per API
 * user): another client on the same key (another n8n process, the team's workflows in a worker)
 * is seen only through the answers' X-RateLimit-Remaining, and recovery leaves it the key. Real
 * HTTP on virtual time: every wait of the package moves the sandbox's clock, and so its window,
 * forward by as much.
 */
import type { IDataObject } from 'n8n-workflow';

import { LearningPlatformTrigger } from '../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node';
import { useClock } from '../../nodes/shared/transport/clock';
import { SETTLE_MS } from '../../nodes/LearningPlatformTrigger/recovery/deliveryLog';
import { deliveryLogApi } from '../../nodes/LearningPlatformTrigger/recovery/host';
import { recoverMissedDeliveries } from '../../nodes/LearningPlatformTrigger/recovery/run';
import { resetRecoveryState } from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { retireAllNow } from '../../nodes/LearningPlatformTrigger/subscription/retirement';
import { hookContext, runHook } from '../support/n8n';
import { GIVE_UP_MS, setUpTriggerTests, type TriggerTestContext } from './setup';

const NODE_KEY = 'node:Learning Platform Trigger';
const COMPLETION_CREATED = 'Events\\Courses\\Completion_created';
const MISSED = 6;

jest.setTimeout(60_000);

const trigger = new LearningPlatformTrigger();
let t: TriggerTestContext;

beforeAll(async () => {
	t = await setUpTriggerTests('recovery-share', { rateLimitPerMinute: 60 });
});
afterAll(async () => {
	await retireAllNow();
	await t.close();
});

function options(staticData: IDataObject, recover: boolean) {
	return {
		parameters: { event: COMPLETION_CREATED, options: { recoverMissedDeliveries: recover } },
		credentials: t.credentials,
		staticData,
		webhookBaseUrl: 'https://n8n.invalid/recovery-share',
	};
}

test('while another client uses most of the key, recovery makes one look and waits; then it redispatches at its share, with no 429', async () => {
	const staticData: IDataObject = {};
	await runHook(trigger, 'create', options(staticData, false));
	const subscriptionId = (staticData[NODE_KEY] as IDataObject).subscriptionId as number;
	for (let i = 0; i < MISSED; i++) {
		await t.sandbox.control.simulateCompletion({});
		await t.sandbox.control.waitForDeliveries({ subscriptionId }, i + 1, 10_000);
	}
	// the platform gives up on each (its retries, if the reading has any, fail too)
	await t.sandbox.control.waitUntilDeliveriesSettled(GIVE_UP_MS);
	const context = hookContext(trigger, options(staticData, true));
	resetRecoveryState();

	let offset = 0;
	const advance = async (ms: number) => {
		offset += ms;
		await t.sandbox.control.advanceClock(ms);
	};
	const restore = useClock({ now: () => Date.now() + offset, sleep: advance });
	let busyFrom: number;
	try {
		// the failures settle, and the set-up's requests leave the window
		await advance(60_000 + SETTLE_MS);
		// the request log's times are whole seconds
		busyFrom = Math.floor((await t.sandbox.control.getClock()).now / 1_000) * 1_000;
		// the other client: 40 of the key's 60, which recovery's share cannot sit beside
		for (let i = 0; i < 40; i++) expect((await t.api('GET', '/events')).status).toBe(200);
		const run = await recoverMissedDeliveries(deliveryLogApi(context), subscriptionId);
		expect(run).toMatchObject({ redispatched: MISSED, failed: 0 });
	} finally {
		restore();
	}

	const ours = (await t.sandbox.control.requests({ username: t.username })).filter(
		(r) => r.user_agent?.startsWith('n8n-nodes-learning-platform/') && Date.parse(r.at) >= busyFrom,
	);
	// the first look's answer showed the key busy: nothing more until the other's minute was over
	const inBusyMinute = ours.filter((r) => Date.parse(r.at) < busyFrom + 59_000);
	expect(inBusyMinute.length).toBeGreaterThanOrEqual(1);
	expect(inBusyMinute.length).toBeLessThanOrEqual(2);
	expect(ours.filter((r) => r.path.endsWith('/redispatch'))).toHaveLength(MISSED);
	expect(ours.every((r) => r.status === 200)).toBe(true);
});
