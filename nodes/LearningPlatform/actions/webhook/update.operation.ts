import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { readSubscriptionRejection, requiredId } from '../../../shared/helpers';
import { hintIfSecretsShown, subscriptionBody, webhookNotFound } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { eventPicker } from '../../../shared/descriptions';
import { subscriptionOptionFields, webhookIdLocator } from './webhook.descriptions';

export const description: INodeProperties[] = [
	webhookIdLocator('The webhook subscription to change'),
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Only the fields added here are sent; everything else stays as it is',
		options: [
			eventPicker({ description: 'Event name or wildcard to subscribe to instead.' }),
			{
				displayName: 'URL',
				name: 'url',
				type: 'string',
				default: '',
				placeholder: 'https://example.com/webhooks/lms',
				description: 'New HTTPS address for the deliveries (http:// is refused)',
			},
			...subscriptionOptionFields,
		],
	},
];

export const option = {
	name: 'Update',
	description: 'Change only the given fields of a webhook subscription',
	action: 'Update a webhook subscription',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Changes the given fields of one webhook subscription (by its numeric Webhook ID): event, url, enabled, secrets.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
		extractValue: true,
	});
	const updateFields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const body = subscriptionBody.call(this, updateFields, itemIndex);
	if (Object.keys(body).length === 0) {
		throw new NodeOperationError(
			this.getNode(),
			'Nothing to update: add at least one field under "Update Fields"',
			{ itemIndex },
		);
	}
	hintIfSecretsShown(this, body);
	// secrets come back unmasked only when this request set them (the user just typed them)
	return (await apiRequest.call(this, 'PATCH', 'webhook', `/${webhookId}`, {
		body,
		itemIndex,
		action: `update webhook subscription ${webhookId}`,
		readRejection: readSubscriptionRejection,
		...webhookNotFound(webhookId),
	})) as IDataObject;
}
