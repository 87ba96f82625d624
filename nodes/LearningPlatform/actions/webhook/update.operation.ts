import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { runPerItem } from '../../helpers/execute';
import { requiredId } from '../../helpers/parameters';
import {
	explainWebhook422,
	secretsShownHint,
	subscriptionBody,
	subscriptionOptionFields,
	webhookIdLocator,
	webhookNotFound,
} from '../../helpers/webhooks';
import { apiRequest } from '../../transport';

const properties: INodeProperties[] = [
	webhookIdLocator('The webhook subscription to change'),
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Only the fields added here are sent; everything else stays as it is',
		options: [
			{
				displayName: 'Event Name or ID',
				name: 'event',
				type: 'options',
				typeOptions: { loadOptionsMethod: 'getEvents' },
				default: '',
				description:
					'Event name or wildcard to subscribe to instead. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
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

const displayOptions = { show: { resource: ['webhook'], operation: ['update'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const hintSecretsShown = secretsShownHint.call(this);
	return await runPerItem.call(this, async function (itemIndex) {
		const webhookId = requiredId.call(this, 'webhookId', 'Webhook', itemIndex, {
			extractValue: true,
		});
		const updateFields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
		const body = subscriptionBody.call(this, updateFields, itemIndex);
		if (Object.keys(body).length === 0) {
			throw new NodeOperationError(
				this.getNode(),
				'Nothing to update: add at least one field under "Update Fields"',
				{
					itemIndex,
				},
			);
		}
		hintSecretsShown(body);
		try {
			// secrets come back unmasked only when this request set them (the user just typed them)
			return (await apiRequest.call(this, 'PATCH', 'webhook', `/${webhookId}`, {
				body,
				itemIndex,
				...webhookNotFound(webhookId),
			})) as IDataObject;
		} catch (error) {
			throw explainWebhook422.call(
				this,
				error,
				`update webhook subscription ${webhookId}`,
				itemIndex,
			);
		}
	});
}
