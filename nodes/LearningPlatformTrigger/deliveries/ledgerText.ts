// The delivery ledger's stored form: one text in the node's static data, which n8n loads and saves
// whole with every delivery, so every byte counts. First `~tag.ms36` (which process wrote it and
// when, milliseconds in base 36), then one group per 10 minutes, `period36;` (Unix time in
// 10-minute periods, base 36) followed by the 8-character keys of that period's occurrences with
// nothing between them, groups separated by spaces: 8 bytes per occurrence, and a group's 7 once
// per period (per minute, at 1,000 deliveries a day, they would weigh as much as the keys).
// Version 1.0.0 wrote one group per minute, `minute36:`, and 12 characters a key, whose first 8
// are the same occurrence's key now: such a text is still read, and 1.0.0 reads none of this one.
// Pure. docs/design.md, "Exactly once".
import type { IDataObject } from 'n8n-workflow';

import { readField } from '../staticData';

/** Characters of an occurrence key (`occurrenceKey`). */
export const KEY_CHARACTERS = 8;

/** A stored form: the mark between a group's time and its keys, and what it says of both. */
interface GroupForm {
	mark: string;
	keyCharacters: number;
	groupSeconds: number;
}
const WRITTEN: GroupForm = { mark: ';', keyCharacters: KEY_CHARACTERS, groupSeconds: 600 };
const VERSION_1_0_0: GroupForm = { mark: ':', keyCharacters: 12, groupSeconds: 60 };

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

const groupOf = (seconds: number) => Math.floor(seconds / WRITTEN.groupSeconds);
/**
 * An occurrence stored in group `group` is taken to be from that group's last second, so it is
 * never forgotten early (up to one group later).
 */
const lastSecondOf = (group: number, form: GroupForm) => (group + 1) * form.groupSeconds - 1;
const groupText = (group: number, keys: string) => `${group.toString(36)}${WRITTEN.mark}${keys}`;

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
		const form = part.includes(WRITTEN.mark) ? WRITTEN : VERSION_1_0_0;
		const mark = part.indexOf(form.mark);
		if (mark <= 0) continue;
		const seconds = lastSecondOf(parseInt(part.slice(0, mark), 36), form);
		for (let at = mark + 1; at + form.keyCharacters <= part.length; at += form.keyCharacters)
			deliveries.set(part.slice(at, at + KEY_CHARACTERS), seconds);
	}
	return { writer: writerOf(field), deliveries };
}

/** The deliveries a static data object holds as started: key -> epoch seconds. */
export function sharedDeliveries(staticData: IDataObject): Map<string, number> {
	return parseLedgerText(readField(staticData, 'startedDeliveries')).deliveries;
}

/** The groups of `deliveries` (key -> epoch seconds), one per 10 minutes, oldest first. */
export function groupsText(deliveries: Map<string, number>): string {
	const byGroup = new Map<number, string[]>();
	for (const [key, seconds] of deliveries) {
		const group = groupOf(seconds);
		const keys = byGroup.get(group);
		if (keys) keys.push(key);
		else byGroup.set(group, [key]);
	}
	return [...byGroup]
		.sort((a, b) => a[0] - b[0])
		.map(([group, keys]) => groupText(group, keys.join('')))
		.join(' ');
}

/** The group of one delivery, `key` at epoch second `seconds`. */
export const entryText = (key: string, seconds: number) => groupText(groupOf(seconds), key);

/** The whole text: the writer, the groups `shared` (may be empty), then the group `own`. */
export const ledgerText = (writer: Writer, shared: string, own: string) =>
	`~${writer.tag}.${writer.at.toString(36)} ${shared ? `${shared} ` : ''}${own}`;
