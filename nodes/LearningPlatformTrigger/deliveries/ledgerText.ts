// The delivery ledger's stored form: one text in the node's static data, which n8n loads and saves
// whole with every delivery, so every byte counts. First `~tag.ms36` (which process wrote it and
// when, milliseconds in base 36), then one group per minute, `minute36;` (Unix minutes in base 36)
// followed by the 8-character keys of that minute's occurrences with nothing between them,
// groups separated by spaces: 8 bytes per occurrence. Version 1.0.0 wrote `minute36:` and
// 12 characters a key, whose first 8 are the same occurrence's key now: such a text is still read,
// and an older version reads none of this one. Pure. docs/design.md, "Exactly once".
import type { IDataObject } from 'n8n-workflow';

import { readField } from '../staticData';

/** Characters of an occurrence key (`occurrenceKey`). */
export const KEY_CHARACTERS = 8;
/** Between a group's minute and its keys; the separator tells the key length. */
const GROUP_MARK = ';';
/** The earlier form's mark, and its key length. */
const EARLIER_GROUP_MARK = ':';
const EARLIER_KEY_CHARACTERS = 12;

/** Which process wrote a text (its tag), and when (ms, its clock). */
export interface Writer {
	tag: string;
	at: number;
}

export interface ParsedLedgerText {
	writer?: Writer;
	/** key -> epoch seconds it counts from */
	deliveries: Map<string, number>;
}

const minuteOf = (seconds: number) => Math.floor(seconds / 60);
/** An occurrence stored in minute `minute` is taken to be from that minute's last second, so it is never forgotten early. */
const lastSecondOf = (minute: number) => minute * 60 + 59;
const groupText = (minute: number, keys: string) => `${minute.toString(36)}${GROUP_MARK}${keys}`;

function writerOf(field: string): Writer | undefined {
	if (!field.startsWith('~')) return undefined;
	const end = field.indexOf(' ');
	const token = end < 0 ? field : field.slice(0, end);
	const dot = token.indexOf('.');
	const at = parseInt(token.slice(dot + 1), 36);
	return dot > 1 && Number.isFinite(at) ? { tag: token.slice(1, dot), at } : undefined;
}

/** Reads a stored text; anything else (no text yet) holds nothing. */
export function parseLedgerText(field: unknown): ParsedLedgerText {
	const deliveries = new Map<string, number>();
	if (typeof field !== 'string') return { deliveries };
	for (const part of field.split(' ')) {
		if (part.startsWith('~')) continue;
		let mark = part.indexOf(GROUP_MARK);
		let stride = KEY_CHARACTERS;
		if (mark < 0) {
			mark = part.indexOf(EARLIER_GROUP_MARK);
			stride = EARLIER_KEY_CHARACTERS;
		}
		if (mark <= 0) continue;
		const seconds = lastSecondOf(parseInt(part.slice(0, mark), 36));
		for (let at = mark + 1; at + stride <= part.length; at += stride)
			deliveries.set(part.slice(at, at + KEY_CHARACTERS), seconds);
	}
	return { writer: writerOf(field), deliveries };
}

/** The deliveries a static data object holds as started: key -> epoch seconds. */
export function sharedDeliveries(staticData: IDataObject): Map<string, number> {
	return parseLedgerText(readField(staticData, 'startedDeliveries')).deliveries;
}

/** The groups of `deliveries` (key -> epoch seconds), one per minute, oldest first. */
export function groupsText(deliveries: Map<string, number>): string {
	const byMinute = new Map<number, string[]>();
	for (const [key, seconds] of deliveries) {
		const minute = minuteOf(seconds);
		const keys = byMinute.get(minute);
		if (keys) keys.push(key);
		else byMinute.set(minute, [key]);
	}
	return [...byMinute]
		.sort((a, b) => a[0] - b[0])
		.map(([minute, keys]) => groupText(minute, keys.join('')))
		.join(' ');
}

/** The group of one delivery, `key` at epoch second `seconds`. */
export const entryText = (key: string, seconds: number) => groupText(minuteOf(seconds), key);

/** The whole text: the writer, the groups `shared` (may be empty), then the group `own`. */
export const ledgerText = (writer: Writer, shared: string, own: string) =>
	`~${writer.tag}.${writer.at.toString(36)} ${shared ? `${shared} ` : ''}${own}`;
