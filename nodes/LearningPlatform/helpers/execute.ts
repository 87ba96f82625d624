import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	NodeExecutionHint,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

/** What an operation returns for one input item: one object, or one object per output item. */
export type ItemResult = IDataObject | IDataObject[];

/**
 * Runs `operation` once per input item and handles, in one place, what every operation
 * needs: `pairedItem` on each output item, "Continue On Fail" (an `{ error }` item paired
 * to the failing input), and the item index on errors so the editor points at the right item.
 */
export async function runPerItem(
	this: IExecuteFunctions,
	operation: (this: IExecuteFunctions, itemIndex: number) => Promise<ItemResult>,
): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	const output: INodeExecutionData[] = [];

	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await operation.call(this, itemIndex);
			const records = Array.isArray(result) ? result : [result];
			const paired = this.helpers.constructExecutionMetaData(
				this.helpers.returnJsonArray(records),
				{
					itemData: { item: itemIndex },
				},
			);
			// not push(...paired): spreading a feed's 100,000+ records overflows the call stack
			for (const item of paired) output.push(item);
		} catch (error) {
			if (this.continueOnFail()) {
				output.push({ json: { error: (error as Error).message }, pairedItem: { item: itemIndex } });
				continue;
			}
			throw withItemIndex.call(this, error, itemIndex);
		}
	}
	return output;
}

/**
 * A hint that concerns the whole run rather than one item: the returned function adds it the
 * first time it is called and ignores later calls, so many items do not repeat it.
 */
export function hintOnce(this: IExecuteFunctions): (hint: NodeExecutionHint) => void {
	let hinted = false;
	return (hint) => {
		if (hinted) return;
		hinted = true;
		this.addExecutionHints(hint);
	};
}

function withItemIndex(this: IExecuteFunctions, error: unknown, itemIndex: number): Error {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		if (error.context.itemIndex === undefined) error.context.itemIndex = itemIndex;
		return error;
	}
	return new NodeOperationError(this.getNode(), error as Error, { itemIndex });
}
