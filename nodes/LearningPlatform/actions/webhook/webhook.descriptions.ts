// UI of the webhook operations.
import type { INodeProperties, INodePropertyModeValidation } from 'n8n-workflow';

/** A locator's typed ID must be a whole number (spaces around it are trimmed when read). */
function wholeNumberValidation(errorMessage: string): INodePropertyModeValidation[] {
	return [{ type: 'regex', properties: { regex: '^\\s*\\d+\\s*$', errorMessage } }];
}

/** A resource locator: pick from a searchable list (`searchListMethod`), or type the ID. */
function idLocator(locator: {
	displayName: string;
	name: string;
	searchListMethod: string;
	listPlaceholder: string;
	idPlaceholder: string;
	what: string;
	description: string;
}): INodeProperties {
	return {
		displayName: locator.displayName,
		name: locator.name,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: locator.description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: locator.listPlaceholder,
				typeOptions: { searchListMethod: locator.searchListMethod, searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: locator.idPlaceholder,
				validation: wholeNumberValidation(`The ${locator.what} is a whole number`),
			},
		],
	};
}

/** The `webhookId` locator: a subscription from a searchable list, or by ID. */
export function webhookIdLocator(description: string): INodeProperties {
	return idLocator({
		displayName: 'Webhook',
		name: 'webhookId',
		searchListMethod: 'searchWebhooks',
		listPlaceholder: 'Select a webhook subscription...',
		idPlaceholder: 'e.g. 12',
		what: 'webhook ID',
		description,
	});
}

/** The `logId` locator: a delivery log entry of the chosen subscription. */
export function logIdLocator(description: string): INodeProperties {
	return idLocator({
		displayName: 'Delivery Log Entry',
		name: 'logId',
		searchListMethod: 'searchWebhookLogs',
		listPlaceholder: 'Select a delivery...',
		idPlaceholder: 'e.g. 345',
		what: 'log ID',
		description,
	});
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
