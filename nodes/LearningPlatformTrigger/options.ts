// The trigger's settings as one node's parameters give them, read in one place.
import type { IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

interface TriggerOptions {
	ignoreRepeatedDeliveries?: boolean;
	maxDeliveryAgeMinutes?: number;
	recoverMissedDeliveries?: boolean;
	keepSubscriptionWhileInactive?: boolean;
}

type Context = IHookFunctions | IWebhookFunctions;

export function triggerOptions(context: Context): TriggerOptions {
	return context.getNodeParameter('options', {}) as TriggerOptions;
}

/** Missed deliveries are recovered unless turned off; never for "Listen for test event". */
export function recovers(context: Context): boolean {
	return (
		context.getMode() !== 'manual' && (triggerOptions(context).recoverMissedDeliveries ?? true)
	);
}

export function keepsSubscriptionWhileInactive(context: IHookFunctions): boolean {
	return triggerOptions(context).keepSubscriptionWhileInactive === true;
}

/** With a wildcard event: the events passed on (empty: all it covers). */
export function passOnEvents(context: IWebhookFunctions): string[] {
	return context.getNodeParameter('passOnEvents', []) as string[];
}
