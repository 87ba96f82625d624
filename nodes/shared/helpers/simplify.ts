import type { IDataObject } from 'n8n-workflow';

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
