// The subscription's own failures, in the user's words (the transport words failed requests;
// the platform's rules behind these are in shared/helpers/subscriptionRules.ts).
import type { FailureNotice } from '../../shared/transport';

export function subscriptionCapReached(cap: number): FailureNotice {
	return {
		message: `The learning platform allows at most ${cap} webhook subscriptions per API key, and this credential's API key has reached that limit`,
		description:
			'Delete webhook subscriptions that are no longer used (Learning Platform node, Webhook resource: Get Many, then Delete), or use a credential with its own API user, then activate the workflow again.',
	};
}

export function webhookUrlNotHttps(webhookUrl: string): FailureNotice {
	return {
		message: `The learning platform only delivers webhooks to https:// URLs, but this workflow's webhook URL is ${webhookUrl}`,
		description:
			'n8n builds webhook URLs from its WEBHOOK_URL environment variable. Set WEBHOOK_URL to the public https:// address that reaches this n8n instance (for example https://n8n.example.com/, with TLS handled by a reverse proxy if n8n itself listens on plain http) and restart n8n. Alternatively, use the Learning Platform Completion Trigger, which polls and needs no public URL.',
	};
}

export const subscriptionWithoutId: FailureNotice = {
	message: 'The learning platform did not return the id of the new webhook subscription',
};
