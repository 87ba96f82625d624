import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { readSubscriptionRejection, requiredText } from '../../../shared/helpers';
import { assertConcreteEvent, assertHttpsUrl } from '../../helpers/webhooks';
import { apiRequest } from '../../../shared/transport';
import { eventPicker } from '../../../shared/descriptions';

export const description: INodeProperties[] = [
	eventPicker({
		description: 'A single event name (not a wildcard) whose sample payload to get or send.',
		required: true,
	}),
	{
		displayName: 'Send To URL',
		name: 'url',
		type: 'string',
		default: '',
		placeholder: 'https://example.com/webhooks/lms',
		description:
			'HTTPS address to deliver the sample to. Leave empty to only return the sample payload. Stored subscriptions never receive it.',
	},
];

export const option = {
	name: 'Send Sample',
	description:
		'Get a sample payload of an event, or deliver it to a given HTTPS URL (never to stored subscriptions)',
	action: 'Send a sample webhook event',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	'Gets a sample payload of a learning-platform event (a fully named event, no wildcard), or delivers it to a given https URL; never to stored subscriptions.';

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const event = requiredText.call(this, 'event', 'Event', itemIndex);
	assertConcreteEvent.call(this, event, 'Event', itemIndex);
	const url = String(this.getNodeParameter('url', itemIndex, '') ?? '').trim();
	const body: IDataObject = { event };
	if (url !== '') body.url = assertHttpsUrl.call(this, url, 'Send To URL', itemIndex);
	const response = (await apiRequest.call(this, 'POST', 'webhook', '/relay', {
		body,
		itemIndex,
		action: 'send the sample event',
		readRejection: readSubscriptionRejection,
	})) as IDataObject;
	return (response?.data as IDataObject) ?? response;
}
