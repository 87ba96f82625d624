import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredText } from '../../helpers/parameters';
import { assertConcreteEvent, assertHttpsUrl, explainWebhook422 } from '../../helpers/webhooks';
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
			'A single event name (not a wildcard) whose sample payload to get or send. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
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

const displayOptions = { show: { resource: ['webhook'], operation: ['sendSample'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runPerItem.call(this, async function (itemIndex) {
		const event = requiredText.call(this, 'event', 'Event', itemIndex);
		assertConcreteEvent.call(this, event, 'Event', itemIndex);
		const url = String(this.getNodeParameter('url', itemIndex, '') ?? '').trim();
		const body: IDataObject = { event };
		if (url !== '') body.url = assertHttpsUrl.call(this, url, 'Send To URL', itemIndex);
		try {
			const response = (await apiRequest.call(this, 'POST', 'webhook', '/relay', {
				body,
				itemIndex,
			})) as IDataObject;
			return (response?.data as IDataObject) ?? response;
		} catch (error) {
			throw explainWebhook422.call(this, error, 'send the sample event', itemIndex);
		}
	});
}
