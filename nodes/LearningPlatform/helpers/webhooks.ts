import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	INodePropertyModeValidation,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { isWildcardEvent } from './events';
import { hintOnce } from './execute';

/** Webhook subscription pieces shared by the webhook operations and list searches. */

export const MASK_PREFIX = '\u2022'.repeat(8);
export const MASK_VISIBLE_CHARACTERS = 4;
export const SECRET_FIELDS = ['signing_key', 'auth_token'] as const;

/** The spec's masking: eight bullets then the last four characters. */
export function maskSecret<T>(value: T): T | string {
	if (typeof value !== 'string' || value === '' || value.startsWith(MASK_PREFIX)) return value;
	return `${MASK_PREFIX}${value.slice(-MASK_VISIBLE_CHARACTERS)}`;
}

/**
 * Reads must never show a secret, even if a server answered unmasked: only create and
 * update (where the user set the secret) may output them as the server returned them.
 */
export function maskSubscription(subscription: IDataObject): IDataObject {
	const masked = { ...subscription };
	for (const field of SECRET_FIELDS)
		if (field in masked) masked[field] = maskSecret(masked[field]) as IDataObject[string];
	return masked;
}

/**
 * Create and update output the secrets as the user set them, the one answer in which the API
 * does not mask them: the returned function says so once per execution, when a body sets one.
 */
export function secretsShownHint(this: IExecuteFunctions): (body: IDataObject) => void {
	const hint = hintOnce.call(this);
	return (body) => {
		if (!SECRET_FIELDS.some((field) => body[field] !== undefined)) return;
		hint({
			type: 'info',
			location: 'outputPane',
			message:
				'The output shows the signing key / auth token as you set them (the API returns them unmasked only in this answer). Later reads show them masked.',
		});
	};
}

/** Rejects anything but an absolute `https://` URL, naming the field, before any request. */
export function assertHttpsUrl(
	this: IExecuteFunctions,
	url: unknown,
	fieldName: string,
	itemIndex: number,
): string {
	const text = typeof url === 'string' ? url.trim() : '';
	let valid = false;
	try {
		const parsed = new URL(text);
		valid = parsed.protocol === 'https:' && parsed.hostname !== '';
	} catch {
		valid = false;
	}
	if (!valid) {
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
	return text;
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

/** The server's own text of an API error, whatever shape the transport kept the body in. */
function serverMessage(error: NodeApiError): string {
	const response = (error.errorResponse ?? {}) as IDataObject;
	const body = ((response.response as IDataObject | undefined)?.body ?? response) as
		| IDataObject
		| string;
	if (typeof body === 'string' && body.trim() !== '') return body.trim();
	const fromBody = typeof body === 'object' && body !== null ? body : {};
	const candidates = [
		fromBody.message,
		(fromBody.error as IDataObject | undefined)?.message,
		fromBody.error,
		fromBody.errors && typeof fromBody.errors === 'object'
			? Object.values(fromBody.errors as IDataObject)
					.flat()
					.join('; ')
			: fromBody.errors,
		error.message,
	];
	for (const candidate of candidates) {
		if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
	}
	return '';
}

/**
 * Turns the 422s of webhook create/update/relay into messages that say what to do. The
 * spec leaves their body shape open, so the server's own text is kept in the message.
 */
export function explainWebhook422(
	this: IExecuteFunctions,
	error: unknown,
	action: string,
	itemIndex: number,
): unknown {
	if (!(error instanceof NodeApiError) || String(error.httpCode) !== '422') return error;
	const text = serverMessage(error);
	const lower = text.toLowerCase();
	let description = 'The server rejected the values sent (HTTP 422).';
	if (lower.includes('maximum') || lower.includes('100')) {
		description =
			'This API user already has 100 webhook subscriptions, the most allowed. Delete unused ones (Operation "Delete") and try again.';
	} else if (lower.includes('already exists')) {
		description =
			'A subscription for this event and URL already exists. Update that one instead (Operation "Update"), or use another URL.';
	} else if (lower.includes('wildcard')) {
		description = 'Pick a single event, not a wildcard.';
	}
	return new NodeApiError(this.getNode(), (error.errorResponse ?? {}) as never, {
		message: `Could not ${action}: ${text || 'the server rejected the request (HTTP 422)'}`,
		description,
		httpCode: '422',
		itemIndex,
	});
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

/** A locator's typed ID must be a whole number (spaces around it are trimmed when read). */
function wholeNumberValidation(errorMessage: string): INodePropertyModeValidation[] {
	return [{ type: 'regex', properties: { regex: '^\\s*\\d+\\s*$', errorMessage } }];
}

/** The `webhookId` resource locator: pick a subscription from a searchable list, or by ID. */
export function webhookIdLocator(description: string): INodeProperties {
	return {
		displayName: 'Webhook',
		name: 'webhookId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a webhook subscription...',
				typeOptions: { searchListMethod: 'searchWebhooks', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 12',
				validation: wholeNumberValidation('The webhook ID is a whole number'),
			},
		],
	};
}

export function logIdLocator(description: string): INodeProperties {
	return {
		displayName: 'Delivery Log Entry',
		name: 'logId',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a delivery...',
				typeOptions: { searchListMethod: 'searchWebhookLogs', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 345',
				validation: wholeNumberValidation('The log ID is a whole number'),
			},
		],
	};
}

/** Subscription fields shared by create (as "Additional Fields") and update ("Update Fields"). */
export const subscriptionOptionFields: INodeProperties[] = [
	{
		displayName: 'Auth Token',
		name: 'auth_token',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Bearer token the platform sends as "Authorization: Bearer &lt;token&gt;" with each delivery, so the receiver can check the caller',
	},
	// The two display-only labels keep their parameter names and their place in the collection,
	// so workflows that set them keep working; like every collection field, they are sent only
	// when added.
	{
		displayName: 'Auth Type Label (Display Only)',
		name: 'auth_type',
		type: 'options',
		options: [
			{ name: 'Bearer', value: 'bearer' },
			{ name: 'HMAC', value: 'hmac' },
			{ name: 'Both', value: 'both' },
		],
		default: 'hmac',
		description:
			"A note stored with the subscription and shown in the platform's lists; it changes nothing. Deliveries are signed when a Signing Key is set and carry the Auth Token when one is set, whatever this label says.",
	},
	{
		displayName: 'Content Type Label (Display Only)',
		name: 'content_type_header',
		type: 'options',
		options: [
			{ name: 'JSON', value: 'application/json' },
			{ name: 'Form URL-Encoded', value: 'application/x-www-form-urlencoded' },
		],
		default: 'application/json',
		description:
			'A note stored with the subscription; it changes nothing. Deliveries are always sent as JSON, whatever this label says.',
	},
	{
		displayName: 'Enabled',
		name: 'is_enabled',
		type: 'boolean',
		default: true,
		description:
			'Whether the subscription receives deliveries. A disabled subscription receives nothing.',
	},
	{
		displayName: 'Signing Key',
		name: 'signing_key',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Secret for HMAC-SHA256 signatures: each delivery then carries an X-Signature header computed with it',
	},
];
