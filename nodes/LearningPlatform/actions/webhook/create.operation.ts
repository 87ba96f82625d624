import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredText } from '../../helpers/parameters';
import {
	explainWebhook422,
	secretsShownHint,
	subscriptionBody,
	subscriptionOptionFields,
} from '../../helpers/webhooks';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [
	{
		displayName: 'Event Name or ID',
		name: 'event',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getEvents' },
		default: '',
		required: true,
		description:
			'Event name to subscribe to, or a wildcard (* for all events, Events\\Courses\\* for one category). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
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

const displayOptions = { show: { resource: ['webhook'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const hintSecretsShown = secretsShownHint.call(this);
	return await runPerItem.call(this, async function (itemIndex) {
		const event = requiredText.call(this, 'event', 'Event', itemIndex);
		const url = this.getNodeParameter('url', itemIndex, '') as string;
		const additionalFields = this.getNodeParameter(
			'additionalFields',
			itemIndex,
			{},
		) as IDataObject;
		const body = subscriptionBody.call(this, { ...additionalFields, event, url }, itemIndex);
		hintSecretsShown(body);
		try {
			// create returns the secrets unmasked: the user just set them, so they stay in the output
			return (await apiRequest.call(this, 'POST', 'webhook', '', {
				body,
				itemIndex,
			})) as IDataObject;
		} catch (error) {
			throw explainWebhook422.call(this, error, 'create the webhook subscription', itemIndex);
		}
	});
}
