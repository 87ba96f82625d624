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
	this: IExecuteFunctions,
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
