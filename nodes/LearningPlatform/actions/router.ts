import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import * as bookmark from './bookmark/Bookmark.resource';
import * as completion from './completion/Completion.resource';
import * as report from './report/Report.resource';
import * as webhook from './webhook/Webhook.resource';

type Operation = { execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[]> };

const resources: Record<string, Record<string, Operation>> = {
	bookmark: { create: bookmark.create },
	completion: { getMany: completion.getMany },
	report: {
		getActivityCompletions: report.getActivityCompletions,
		getAttendance: report.getAttendance,
		getContent: report.getContent,
		getResult: report.getResult,
	},
	webhook: {
		getEvents: webhook.getEvents,
		getMany: webhook.getMany,
		get: webhook.get,
		create: webhook.create,
		update: webhook.update,
		delete: webhook.delete,
		getLogs: webhook.getLogs,
		redispatch: webhook.redispatch,
		sendSample: webhook.sendSample,
	},
};

/** resource + operation -> that operation's `execute` (each handles its items itself). */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const handler = resources[resource]?.[operation];
	if (!handler) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of resource "${resource}" is not supported`,
		);
	}
	return [await handler.execute.call(this)];
}
