// What n8n's three webhook methods do with the subscription: look (checkExists), register
// (create) and release (delete). A published edit calls delete and then checkExists/create in the
// same process, so a production subscription is retired only after a grace period (retirement.ts).
import type { IHookFunctions } from 'n8n-workflow';

import {
	claimSubscription,
	holdingRetirement,
	retireAllNow,
	retireWhenUnclaimed,
} from './retirement';
import { deleteSubscription } from './deletion';
import { probeWebhook } from './probe';
import { subscriptionExists } from './lookup';
import { createSubscription } from './registration';
import { subscriptionRequests } from './requests';
import { readStoredSubscription } from './stored';

const isTest = (context: IHookFunctions) => context.getMode() === 'manual';

/**
 * Whether the trigger answers at `url` as active (401 to an unsigned request: n8n says 404 when no
 * workflow listens there), while this instance's own URL is another: the instance this one was
 * copied from still serves the subscription its data holds.
 */
async function servedElsewhere(context: IHookFunctions, url: string): Promise<boolean> {
	if ((await probeWebhook.call(context, url)) !== 401) return false;
	context.logger.warn(
		`Learning Platform Trigger: this workflow's data holds a subscription that delivers to ${url}, where another n8n instance still runs this trigger (this instance is a copy of it?). It is left to that instance; this one registers a subscription of its own. Give the copy its own API user (README, "A copy of n8n").`,
		{ workflowId: context.getWorkflow().id },
	);
	return true;
}

/** checkExists: whether the subscription static data holds is in place for this URL and event. */
export async function subscriptionInPlace(this: IHookFunctions): Promise<boolean> {
	const webhookUrl = this.getNodeWebhookUrl('default') as string;
	const event = this.getNodeParameter('event') as string;
	const staticData = this.getWorkflowStaticData('node');
	const look = async () =>
		await subscriptionExists(subscriptionRequests(this), staticData, webhookUrl, event);
	return isTest(this) ? await look() : await holdingRetirement.call(this, look);
}

/** create: registers (or adopts, or moves) the subscription and keeps it from retirement. */
export async function registerSubscription(this: IHookFunctions): Promise<void> {
	const webhookUrl = this.getNodeWebhookUrl('default') as string;
	const event = this.getNodeParameter('event') as string;
	const test = isTest(this);
	// subscriptions waiting to be retired (this trigger's, or a workflow's just switched off)
	// may hold the API key's last free places
	await createSubscription(
		subscriptionRequests(this),
		this.getWorkflowStaticData('node'),
		webhookUrl,
		event,
		{
			test,
			freePlaces: retireAllNow,
			servedElsewhere: async (url) => await servedElsewhere(this, url),
		},
	);
	if (!test) await claimSubscription.call(this);
}

/**
 * delete: with `keep` the production subscription stays; a test one goes at once; a production
 * one is retired unless n8n activates the trigger again within the grace period (a published
 * edit: docs/design.md, "Edits and moves").
 */
export async function releaseSubscription(this: IHookFunctions, keep: boolean): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const { subscriptionId, test } = readStoredSubscription(staticData);
	if (keep || test || subscriptionId === undefined)
		return await deleteSubscription(subscriptionRequests(this), staticData, { keep });
	retireWhenUnclaimed.call(this, subscriptionId);
	return true;
}
