import type { IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

/**
 * One trigger node of one workflow, as this process's memory keys it (the webhook trigger's recovery
 * runs and subscriptions waiting to be retired, the Completion Trigger's running poll): the same
 * across the workflow's deactivation and activation.
 */
export function triggerScope(this: IHookFunctions | IWebhookFunctions | IPollFunctions): string {
	return `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
}
