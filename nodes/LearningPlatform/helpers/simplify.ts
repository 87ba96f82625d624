import type { IDataObject } from 'n8n-workflow';

import { SIMPLIFIED_FIELDS, type SimplifiedRecordType } from '../actions/common.descriptions';

/** One record with only the simplified fields of its type, in that order (absent ones omitted). */
export function simplifyRecord(record: IDataObject, recordType: SimplifiedRecordType): IDataObject {
	const simplified: IDataObject = {};
	for (const field of SIMPLIFIED_FIELDS[recordType]) {
		if (field in record) simplified[field] = record[field];
	}
	return simplified;
}

export function simplifyRecords(
	records: IDataObject[],
	recordType: SimplifiedRecordType,
): IDataObject[] {
	return records.map((record) => simplifyRecord(record, recordType));
}
