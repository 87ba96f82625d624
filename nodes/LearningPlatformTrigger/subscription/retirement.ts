// n8n calls a trigger's `delete` both when its workflow is switched off and when an edit of the
// trigger is published, and tells it nothing of what follows. A publish calls `checkExists` (and
// `create`) right after, in the same process: n8n 2.x's publication applier tears the changed
// trigger down and then activates it; n8n 1.x removes the workflow and adds it again. Deleting the
// subscription at once would leave the platform none for the time between, and a completion made
// then would never be sent (nor logged, so never recovered). So the production subscription is
// retired after a grace period, and an activation of the same trigger within it takes the
// subscription over, or retires it at once if it uses another. docs/design.md, "Edits and moves".
import type { IHookFunctions } from 'n8n-workflow';

import { triggerScope } from '../../shared/helpers';
import { clock } from '../../shared/transport';
import { deleteSubscriptionById } from './deletion';
import { subscriptionRequests } from './requests';
import { readStoredSubscription } from './stored';

/** n8n activates the trigger again within milliseconds of its teardown; seconds on a busy machine. */
export const RETIREMENT_GRACE_MS = 10_000;

interface Retirement {
	subscriptionId: number;
	retire: () => Promise<void>;
	grace: AbortController;
}

const pending = new Map<string, Retirement>();

/**
 * n8n's `delete` of a production subscription: deleted once the grace period has passed, unless
 * an activation of this trigger in this process settles it first.
 */
export function retireWhenUnclaimed(this: IHookFunctions, subscriptionId: number): void {
	retireLater(triggerScope.call(this), subscriptionId, async () => {
		const staticData = this.getWorkflowStaticData('node');
		if (!(await deleteSubscriptionById(subscriptionRequests(this), staticData, subscriptionId)))
			this.logger.warn(
				'Learning Platform Trigger: the webhook subscription of a switched-off workflow could not be deleted; the next activation reuses or replaces it',
				{ workflowId: this.getWorkflow().id, subscriptionId },
			);
	});
}

/** The subscription this trigger's static data holds now: the one an activation ended with. */
function subscriptionInUse(this: IHookFunctions): number | undefined {
	return readStoredSubscription(this.getWorkflowStaticData('node')).subscriptionId;
}

/** An activation of this trigger has its subscription in static data: that one stays, any other waiting goes now. */
export async function claimSubscription(this: IHookFunctions): Promise<void> {
	await settleRetirement(triggerScope.call(this), subscriptionInUse.call(this));
}

/**
 * Runs `check` (the activation's look at its subscription) with this trigger's pending
 * retirement held: its grace period cannot end while the look is under way (on a busy machine
 * n8n activated a published edit about 10 s after the teardown, and the grace ended between the
 * look finding the subscription and the activation going on with it). Then the subscription in
 * static data stays and any other goes, as `claimSubscription`; a failed look (n8n tries again)
 * gives the retirement a new grace period.
 */
export async function holdingRetirement(
	this: IHookFunctions,
	check: () => Promise<boolean>,
): Promise<boolean> {
	const key = triggerScope.call(this);
	const retirement = pending.get(key);
	if (retirement === undefined) return await check();
	pending.delete(key);
	retirement.grace.abort();
	let looked = false;
	try {
		const exists = await check();
		looked = true;
		await settle(key, retirement, subscriptionInUse.call(this));
		return exists;
	} finally {
		if (!looked) retireLater(key, retirement.subscriptionId, retirement.retire);
	}
}

/**
 * Runs `retire` (which deletes subscription `subscriptionId`) once the grace period has passed,
 * unless an activation of the trigger `key` settles it first. A second retirement for the same
 * trigger settles the first as an activation would.
 */
export function retireLater(
	key: string,
	subscriptionId: number,
	retire: () => Promise<void>,
): void {
	const earlier = pending.get(key);
	if (earlier !== undefined) void settle(key, earlier, subscriptionId);
	const retirement: Retirement = { subscriptionId, retire, grace: new AbortController() };
	pending.set(key, retirement);
	void (async () => {
		try {
			await clock().sleep(RETIREMENT_GRACE_MS, retirement.grace.signal);
		} catch {
			// the grace was ended early: the activation that ended it decided
		}
		if (pending.get(key) === retirement) await settle(key, retirement, undefined);
	})();
}

/**
 * An activation of trigger `key` (or the end of the grace period) decides a pending retirement:
 * the subscription the trigger now uses stays; any other is retired now.
 */
export async function settleRetirement(
	key: string,
	subscriptionIdInUse: number | undefined,
): Promise<void> {
	const retirement = pending.get(key);
	if (retirement !== undefined) await settle(key, retirement, subscriptionIdInUse);
}

/** Whether any trigger in this process has a subscription waiting to be retired. */
export function retirementPending(): boolean {
	return pending.size > 0;
}

/** Ends every grace period now, as if it had passed (when their places are needed; tests); false if none was waiting. */
export async function retireAllNow(): Promise<boolean> {
	if (pending.size === 0) return false;
	await Promise.all(
		[...pending].map(async ([key, retirement]) => await settle(key, retirement, undefined)),
	);
	return true;
}

async function settle(
	key: string,
	retirement: Retirement,
	subscriptionIdInUse: number | undefined,
): Promise<void> {
	if (pending.get(key) === retirement) pending.delete(key);
	retirement.grace.abort();
	if (retirement.subscriptionId === subscriptionIdInUse) return;
	try {
		await retirement.retire();
	} catch {
		// `retire` reports its own failures; a subscription left behind is adopted or replaced by
		// the trigger's next activation
	}
}
