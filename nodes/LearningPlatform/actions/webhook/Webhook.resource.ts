import { resourceProperties } from '../operations';
import * as create from './create.operation';
import * as deleteWebhook from './delete.operation';
import * as get from './get.operation';
import * as getEvents from './getEvents.operation';
import * as getLogs from './getLogs.operation';
import * as getMany from './getMany.operation';
import * as redispatch from './redispatch.operation';
import * as sendSample from './sendSample.operation';
import * as update from './update.operation';

export const operations = {
	create,
	delete: deleteWebhook,
	get,
	getEvents,
	getLogs,
	getMany,
	redispatch,
	sendSample,
	update,
};

export const description = resourceProperties('webhook', operations, 'getMany');
