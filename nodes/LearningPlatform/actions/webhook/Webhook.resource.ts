import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as deleteWebhook from './delete.operation';
import * as get from './get.operation';
import * as getEvents from './getEvents.operation';
import * as getLogs from './getLogs.operation';
import * as getMany from './getMany.operation';
import * as redispatch from './redispatch.operation';
import * as sendSample from './sendSample.operation';
import * as update from './update.operation';

export {
	create,
	deleteWebhook as delete,
	get,
	getEvents,
	getLogs,
	getMany,
	redispatch,
	sendSample,
	update,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['webhook'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description:
					'Subscribe an HTTPS URL to an event or wildcard; the output shows the secrets as set',
				action: 'Create a webhook subscription',
			},
			{
				name: 'Delete',
				value: 'delete',
				description: 'Delete a webhook subscription so it receives nothing more',
				action: 'Delete a webhook subscription',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Get one webhook subscription (secrets masked)',
				action: 'Get a webhook subscription',
			},
			{
				name: 'Get Delivery Logs',
				value: 'getLogs',
				description:
					'List the delivery attempts of a webhook subscription, with status codes and responses',
				action: 'Get webhook delivery logs',
			},
			{
				name: 'Get Events',
				value: 'getEvents',
				description: 'List the event names and wildcards a subscription can use',
				action: 'Get webhook events',
			},
			{
				name: 'Get Many',
				value: 'getMany',
				description: 'List the webhook subscriptions of this API user (secrets masked)',
				action: 'Get many webhook subscriptions',
			},
			{
				name: 'Redispatch',
				value: 'redispatch',
				description: 'Queue a logged delivery (usually a failed one) to be sent again',
				action: 'Redispatch a webhook delivery',
			},
			{
				name: 'Send Sample',
				value: 'sendSample',
				description:
					'Get a sample payload of an event, or deliver it to a given HTTPS URL (never to stored subscriptions)',
				action: 'Send a sample webhook event',
			},
			{
				name: 'Update',
				value: 'update',
				description: 'Change only the given fields of a webhook subscription',
				action: 'Update a webhook subscription',
			},
		],
		default: 'getMany',
	},
	...getEvents.description,
	...getMany.description,
	...get.description,
	...create.description,
	...update.description,
	...deleteWebhook.description,
	...getLogs.description,
	...redispatch.description,
	...sendSample.description,
];
