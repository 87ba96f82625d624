import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { readSubscriptionRejection, requiredText } from '../../../shared/helpers';
import { hintIfSecretsShown, subscriptionBody } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { eventPicker } from '../../../shared/descriptions';
import { subscriptionOptionFields } from './webhook.descriptions';

export const description: INodeProperties[] = [
	eventPicker({
		description:
			'Event name to subscribe to, or a wildcard (* for all events, Events\\Courses\\* for one category).',
		required: true,
	}),
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://example.com/webhooks/lms',
		description: 'HTTPS address that receives the deliveries (http:// is refused)',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: subscriptionOptionFields,
	},
];

export const option = {
	name: 'Create',
	description:
		'Subscribe an HTTPS URL to an event or wildcard; the output shows the secrets as set',
	action: 'Create a webhook subscription',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Subscribes an https URL to a learning-platform event (or a wildcard such as Events\\Courses\\*). Returns the new subscription with its id.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const event = requiredText.call(this, 'event', 'Event', itemIndex);
	const url = this.getNodeParameter('url', itemIndex, '') as string;
	const additionalFields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const body = subscriptionBody.call(this, { ...additionalFields, event, url }, itemIndex);
	hintIfSecretsShown(this, body);
	// create returns the secrets unmasked: the user just set them, so they stay in the output
	return (await apiRequest.call(this, 'POST', 'webhook', '', {
		body,
		itemIndex,
		action: 'create the webhook subscription',
		readRejection: readSubscriptionRejection,
	})) as IDataObject;
}
