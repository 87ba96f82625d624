import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Reads an optional numeric ID parameter. IDs are text fields in the UI (so expressions and
 * pasted values work); empty means "not set". Anything but a positive whole number is
 * rejected naming the field, before any request is sent.
 */
export function optionalId(
	this: IExecuteFunctions,
	parameterName: string,
	displayName: string,
	itemIndex: number,
): number | undefined {
	const raw = this.getNodeParameter(parameterName, itemIndex, '') as unknown;
	return parseId.call(this, raw, displayName, itemIndex);
}

export function requiredId(
	this: IExecuteFunctions,
	parameterName: string,
	displayName: string,
	itemIndex: number,
	options: { extractValue?: boolean } = {},
): number {
	const raw = this.getNodeParameter(parameterName, itemIndex, '', options) as unknown;
	const id = parseId.call(this, raw, displayName, itemIndex);
	if (id === undefined) {
		throw new NodeOperationError(this.getNode(), `"${displayName}" is required`, { itemIndex });
	}
	return id;
}

/** Reads a text parameter that must not be empty (surrounding spaces do not count). */
export function requiredText(
	this: IExecuteFunctions,
	parameterName: string,
	displayName: string,
	itemIndex: number,
): string {
	const text = String(this.getNodeParameter(parameterName, itemIndex, '') ?? '').trim();
	if (text === '') {
		throw new NodeOperationError(this.getNode(), `"${displayName}" is required`, { itemIndex });
	}
	return text;
}

export function parseId(
	this: Pick<IExecuteFunctions, 'getNode'>,
	raw: unknown,
	displayName: string,
	itemIndex: number,
): number | undefined {
	if (raw === undefined || raw === null) return undefined;
	const text = String(raw).trim();
	if (text === '') return undefined;
	if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
		throw new NodeOperationError(
			this.getNode(),
			`"${displayName}" must be a positive whole number, got "${text}"`,
			{ itemIndex },
		);
	}
	return Number(text);
}

/** The record cap of Return All / Limit; undefined means read to the end. */
export function readLimit(this: IExecuteFunctions, itemIndex: number): number | undefined {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	if (returnAll) return undefined;
	const limit = this.getNodeParameter('limit', itemIndex, 50) as unknown;
	// the field's minimum holds in the editor only: an expression can still give 0, -5 or 'ten'
	if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
		throw new NodeOperationError(
			this.getNode(),
			`"Limit" must be a whole number of at least 1, got ${JSON.stringify(limit)}`,
			{
				itemIndex,
				description: 'Set a positive limit, or turn on "Return All" to get every record.',
			},
		);
	}
	return limit;
}

/** The flags among `names` that are on, each as `true`: the API reads an absent flag as off. */
export function enabledFlags<Flag extends string>(
	values: Partial<Record<Flag, unknown>>,
	names: readonly Flag[],
): Partial<Record<Flag, true>> {
	const flags: Partial<Record<Flag, true>> = {};
	for (const name of names) if (values[name] === true) flags[name] = true;
	return flags;
}
