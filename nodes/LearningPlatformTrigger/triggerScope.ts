import type { IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

/**
 * One trigger node of one workflow, as this process's memory keys it (recovery runs, subscriptions
 * waiting to be retired): the same across the workflow's deactivation and activation.
 */
export function triggerScope(this: IHookFunctions | IWebhookFunctions): string {
	return `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
}
