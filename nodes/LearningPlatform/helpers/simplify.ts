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

/** The fields a simplified record keeps: who, what, status, when. Anything else is dropped. */
export const SIMPLIFIED_FIELDS = {
	/** Completion records of the change feed (Completion → Get Many, Completion Trigger) */
	completion: [
		'completionid',
		'username',
		'contentid',
		'contentname',
		'contenttype',
		'completionstatus',
		'timecompleted',
		'lastupdated',
	],
	activitycompletions: [
		'username',
		'contentid',
		'contentname',
		'activityid',
		'activityname',
		'activitycompletionstatus',
		'activitytimecompleted',
	],
	attendance: [
		'username',
		'contentid',
		'contentname',
		'sessionid',
		'eventname',
		'sessionstarttime',
		'attendancestatus',
	],
	content: [
		'contentid',
		'fullname',
		'contenttype',
		'status',
		'totalenrolments',
		'totalcompletions',
		'timemodified',
	],
} as const satisfies Record<string, readonly string[]>;

export type SimplifiedRecordType = keyof typeof SIMPLIFIED_FIELDS;

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
