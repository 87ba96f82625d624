import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

/** What an operation returns for one input item: one object, or one object per output item. */
export type ItemResult = IDataObject | IDataObject[];

/**
 * An operation file's exports: its picker entry, what an AI model reads about it when the node is
 * its tool, its own fields, and what it does per item.
 */
export interface Operation {
	option: Required<Pick<INodePropertyOptions, 'name' | 'description' | 'action'>>;
	toolDescription: string;
	/** its fields; the resource shows them for this operation only */
	description: INodeProperties[];
	execute(this: IExecuteFunctions, itemIndex: number): Promise<ItemResult>;
}

export type OperationTable = Record<string, Operation>;

/**
 * A resource's operation picker and fields, built from its table: the picker's values are the
 * table's keys and each operation's fields show for that key only, so a value cannot be misspelt.
 */
export function resourceProperties<Table extends OperationTable>(
	resource: string,
	operations: Table,
	defaultOperation: keyof Table & string,
): INodeProperties[] {
	const entries = Object.entries(operations).sort(([, a], [, b]) =>
		a.option.name.localeCompare(b.option.name),
	);
	const picker: INodeProperties = {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: [resource] } },
		options: entries.map(([value, operation]) => ({ ...operation.option, value })),
		default: defaultOperation,
	};
	const fields = entries.flatMap(([value, operation]) =>
		updateDisplayOptions({ show: { resource: [resource], operation: [value] } }, [
			toolDescriptionProperty(operation.toolDescription),
			...operation.description,
		]),
	);
	return [picker, ...fields];
}

/**
 * The tool copy's description of the chosen operation (n8n then adds none of its own): shown and
 * sent only when the node is an AI agent's or MCP client's tool, editable there.
 */
function toolDescriptionProperty(text: string): INodeProperties {
	return {
		displayName: 'Tool Description',
		name: 'toolDescription',
		type: 'string',
		typeOptions: { rows: 4 },
		default: text,
		description:
			'What the AI model reads about this tool: what it does, what it needs, what it returns. Edit it to fit your workflow.',
		displayOptions: { show: { '@tool': [true] } },
	};
}
