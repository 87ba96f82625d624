import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

// What the node hands an AI model when it runs as a tool (its `...Tool` copy): everything it
// outputs goes into the model's context, so lists are bounded and say when they were cut.

/** Whether this run is the node's tool copy, called by an AI agent or an MCP client. */
export function runsAsTool(context: IExecuteFunctions): boolean {
	return context.getNode().type.endsWith('Tool');
}

/** A bound on the records a report hands the model; on the tool copy only. */
export const toolLimitProperty: INodeProperties = {
	displayName: 'Limit',
	name: 'limit',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: 50,
	description: 'Max number of results to return',
	displayOptions: { show: { '@tool': [true] } },
};

/** A last item telling the model that there is more than it was given, and how to get it. */
export function moreNote(shown: number, total: number | undefined, advice: string): IDataObject {
	const of =
		total === undefined ? `the first ${shown} records; more exist` : `${shown} of ${total} records`;
	return { note: `Showing ${of}. ${advice}` };
}

/** On the tool copy, at most Limit records, then a note; elsewhere the records as they are. */
export function boundedForModel(
	this: IExecuteFunctions,
	itemIndex: number,
	records: IDataObject[],
	advice: string,
): IDataObject[] {
	if (!runsAsTool(this)) return records;
	const limit = Number(this.getNodeParameter('limit', itemIndex, toolLimitProperty.default));
	if (!Number.isInteger(limit) || limit < 1 || records.length <= limit) return records;
	const shown = records.slice(0, limit);
	shown.push(moreNote(limit, records.length, advice));
	return shown;
}
