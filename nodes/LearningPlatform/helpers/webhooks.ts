import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isHttpsUrl, isWildcardEvent, SECRET_FIELDS } from '../../shared/helpers';
import { hintOnce } from './hints';

/**
 * Webhook subscription logic of the webhook operations: validation, the request body, and what a
 * 404 means (what they share with the trigger is in the core: the masking in
 * shared/helpers/masking.ts, the platform's rules in shared/helpers/subscriptionRules.ts).
 * Their UI is in actions/webhook/webhook.descriptions.ts.
 */

/**
 * Create and update output the secrets as the user set them, the one answer in which the API
 * does not mask them: say so once per run, when a body sets one.
 */
export function hintIfSecretsShown(context: IExecuteFunctions, body: IDataObject): void {
	if (!SECRET_FIELDS.some((field) => body[field] !== undefined)) return;
	hintOnce(context, 'secretsShown', {
		type: 'info',
		location: 'outputPane',
		message:
			'The output shows the signing key / auth token as you set them (the API returns them unmasked only in this answer). Later reads show them masked.',
	});
}

/** Rejects anything but an absolute `https://` URL, naming the field, before any request. */
export function assertHttpsUrl(
	this: IExecuteFunctions,
	url: unknown,
	fieldName: string,
	itemIndex: number,
): string {
	const text = typeof url === 'string' ? url.trim() : '';
	if (isHttpsUrl(text)) return text;
	throw new NodeOperationError(
		this.getNode(),
		`"${fieldName}" must be an https:// URL, got "${text}"`,
		{
			itemIndex,
			description:
				'The Learning Platform only delivers to HTTPS endpoints. Use the https:// address of the receiving service (for an n8n Webhook node, its production URL behind TLS).',
		},
	);
}

export function assertConcreteEvent(
	this: IExecuteFunctions,
	event: string,
	fieldName: string,
	itemIndex: number,
): void {
	if (isWildcardEvent(event)) {
		throw new NodeOperationError(
			this.getNode(),
			`"${fieldName}" must be a single event, not the wildcard "${event}"`,
			{
				itemIndex,
				description:
					'Sample payloads exist per concrete event, e.g. Events\\Courses\\Completion_created.',
			},
		);
	}
}

/**
 * The subscription body from the fields the user set; unset fields are left out so the
 * server keeps their values (PATCH semantics) or applies its defaults (create).
 */
export function subscriptionBody(
	this: IExecuteFunctions,
	fields: IDataObject,
	itemIndex: number,
): IDataObject {
	const body: IDataObject = {};
	const event = typeof fields.event === 'string' ? fields.event.trim() : fields.event;
	if (event !== undefined && event !== '') body.event = event;
	if (fields.url !== undefined) body.url = assertHttpsUrl.call(this, fields.url, 'URL', itemIndex);
	for (const secret of SECRET_FIELDS) {
		// an empty secret field is "not set" rather than "clear": the API masks reads, so
		// nobody can tell a cleared secret from a forgotten one
		if (typeof fields[secret] === 'string' && fields[secret] !== '') body[secret] = fields[secret];
	}
	if (fields.auth_type !== undefined && fields.auth_type !== '') body.auth_type = fields.auth_type;
	if (fields.content_type_header !== undefined && fields.content_type_header !== '') {
		body.content_type_header = fields.content_type_header;
	}
	if (typeof fields.is_enabled === 'boolean') body.is_enabled = fields.is_enabled;
	return body;
}

/** What a 404 means for an operation on one subscription (transport option `notFoundMessage`). */
export function webhookNotFound(webhookId: number): {
	notFoundMessage: string;
	notFoundDescription: string;
} {
	return {
		notFoundMessage: `Webhook subscription ${webhookId} not found`,
		notFoundDescription:
			'It may have been deleted, or belong to another API user (each API user sees only its own subscriptions). Pick it from the list, or list them with Operation "Get Many".',
	};
}

/** What a 404 means for an operation on one delivery log entry of a subscription. */
export function logNotFound(
	webhookId: number,
	logId: number,
): { notFoundMessage: string; notFoundDescription: string } {
	return {
		notFoundMessage: `Delivery log entry ${logId} of webhook subscription ${webhookId} not found`,
		notFoundDescription:
			'Either the subscription no longer exists, or this log entry belongs to another subscription. Pick the entry from the list, or read the log with Operation "Get Delivery Logs".',
	};
}
