import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import * as bookmark from './bookmark/Bookmark.resource';
import * as completion from './completion/Completion.resource';
import type { Operation, OperationTable } from './operations';
import * as report from './report/Report.resource';
import * as webhook from './webhook/Webhook.resource';

/** Every operation by resource and operation name; the pickers are built from the same tables. */
export const resources = {
	bookmark: bookmark.operations,
	completion: completion.operations,
	report: report.operations,
	webhook: webhook.operations,
} satisfies Record<string, OperationTable>;

export type Resource = keyof typeof resources;

function operationFor(resource: string, operation: string): Operation | undefined {
	if (!Object.hasOwn(resources, resource)) return undefined;
	const table: OperationTable = resources[resource as Resource];
	return Object.hasOwn(table, operation) ? table[operation] : undefined;
}

/**
 * Runs the chosen operation once per input item and does, in one place, what every operation
 * needs: `pairedItem` on each output item, "Continue On Fail" (an `{ error }` item paired to the
 * failing input), and the item index on errors so the editor points at the right item.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const handler = operationFor(resource, operation);
	if (!handler) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of resource "${resource}" is not supported`,
		);
	}

	const items = this.getInputData();
	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await handler.execute.call(this, itemIndex);
			const paired = this.helpers.constructExecutionMetaData(
				this.helpers.returnJsonArray(Array.isArray(result) ? result : [result]),
				{ itemData: { item: itemIndex } },
			);
			// not push(...paired): spreading a feed's 100,000+ records overflows the call stack
			for (const item of paired) output.push(item);
		} catch (error) {
			if (this.continueOnFail()) {
				output.push({ json: { error: (error as Error).message }, pairedItem: { item: itemIndex } });
				continue;
			}
			throw withItemIndex(this, error, itemIndex);
		}
	}
	return [output];
}

function withItemIndex(context: IExecuteFunctions, error: unknown, itemIndex: number): Error {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		if (error.context.itemIndex === undefined) error.context.itemIndex = itemIndex;
		return error;
	}
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}
