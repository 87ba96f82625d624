import type { INodeProperties } from 'n8n-workflow';

/**
 * UI shared by several operations (and the Completion Trigger).
 *
 * Simplify (n8n UX guideline: outputs with more than 10 fields offer it). It came with node
 * version 1.1 of the Learning Platform node and of the Completion Trigger: on version 1 it defaults
 * to off, so existing workflows keep their full output; new nodes (1.1) default to on.
 */

/** The version that introduced Simplify (on by default from it on). */
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

/**
 * The Simplify parameter (`simple`), as two entries: off by default on version 1, on from 1.1.
 * Operations add their resource/operation with `updateDisplayOptions`, which keeps `@version`.
 */
export function simplifyProperties(recordType: SimplifiedRecordType): INodeProperties[] {
	const simplify: INodeProperties = {
		displayName: 'Simplify',
		name: 'simple',
		type: 'boolean',
		default: true,
		description: 'Whether to return a simplified version of the response instead of the raw data',
		hint: `Simplified records keep only: ${SIMPLIFIED_FIELDS[recordType].join(', ')}`,
		displayOptions: { show: { '@version': [{ _cnd: { gte: SIMPLIFY_VERSION } }] } },
	};
	// Version 1 predates Simplify: off unless switched on, so saved workflows keep their output.
	const simplifyV1: INodeProperties = {
		...simplify,
		default: false,
		displayOptions: { show: { '@version': [1] } },
	};
	return [simplifyV1, simplify];
}
