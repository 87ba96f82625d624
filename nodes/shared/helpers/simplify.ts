import type { IDataObject } from 'n8n-workflow';

/**
 * Simplify came with node version 1.1 of the Learning Platform node and of the Completion Trigger:
 * on version 1 it defaults to off, so saved workflows keep their full output.
 */
export const SIMPLIFY_VERSION = 1.1;

/** Simplify's default on a node of this version. */
export function simplifyDefault(typeVersion: number): boolean {
	return typeVersion >= SIMPLIFY_VERSION;
}

/** One record with only the kept fields, in that order (absent ones omitted). */
export function simplifyRecord(record: IDataObject, keptFields: readonly string[]): IDataObject {
	const simplified: IDataObject = {};
	for (const field of keptFields) {
		if (field in record) simplified[field] = record[field];
	}
	return simplified;
}

export function simplifyRecords(
	records: IDataObject[],
	keptFields: readonly string[],
): IDataObject[] {
	return records.map((record) => simplifyRecord(record, keptFields));
}
