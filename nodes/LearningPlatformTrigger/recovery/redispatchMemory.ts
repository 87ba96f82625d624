// Which log entries this trigger has had the platform redispatch, and what each entry showed then
// (its `tries`). The spec leaves open what a redispatch does to its entry: it may record the
// redispatch's attempts (a failure then shows as more tries), only flag it, or leave it untouched
// and log the attempts as entries of their own. Only this memory tells, under every reading, that
// an entry was asked for already, so a redispatch is asked for again only when its entry shows it
// failed. Kept per process, and carried in the static data of every new delivery (n8n saves it
// with the delivery), so other processes and a restarted n8n learn it. docs/design.md, "Missed
// deliveries".
import type { IDataObject } from 'n8n-workflow';

import { readField, writeField } from '../staticData';
import { RECOVERY_HORIZON_MS } from './deliveryLog';

/** entry id -> the entry's `tries` when its redispatch was asked for, and when (epoch ms) */
export type Redispatches = Map<number, { tries: number; at: number }>;

// Process-wide state: the memory per workflow node and subscription. `resetRedispatchMemory`
// clears it for tests.
const memories = new Map<string, Redispatches>();

export function resetRedispatchMemory(): void {
	memories.clear();
}

/** Longer than recovery reads the log back, so no entry it reads is forgotten. */
const REMEMBER_MS = RECOVERY_HORIZON_MS + 60 * 60_000;
/**
 * More than a three-day outage at 1,000 completions a day asks for (about 3,100); about 12 bytes
 * each in the static data n8n saves.
 */
const MAX_REMEMBERED = 5_000;

/** This process's memory for the node `scope` and its subscription (the one a run fills). */
export function redispatchesOf(scope: string, subscriptionId: number): Redispatches {
	const key = `${scope}:${subscriptionId}`;
	let memory = memories.get(key);
	if (!memory) {
		memory = new Map();
		memories.set(key, memory);
	}
	return memory;
}

function parse(field: unknown): { subscriptionId: number; entries: Redispatches } | undefined {
	if (typeof field !== 'string') return undefined;
	const [head, ...parts] = field.split(' ');
	const subscriptionId = parseInt(head, 36);
	if (!Number.isFinite(subscriptionId)) return undefined;
	const entries: Redispatches = new Map();
	for (const part of parts) {
		const [id, tries, minute] = part.split('.').map((n) => parseInt(n, 36));
		if ([id, tries, minute].every(Number.isFinite)) entries.set(id, { tries, at: minute * 60_000 });
	}
	return { subscriptionId, entries };
}

function render(subscriptionId: number, entries: Redispatches): string {
	const parts = [subscriptionId.toString(36)];
	for (const [id, { tries, at }] of entries)
		parts.push(`${id.toString(36)}.${tries.toString(36)}.${Math.floor(at / 60_000).toString(36)}`);
	return parts.join(' ');
}

/**
 * Takes in what `staticData` (as n8n loaded it for a delivery or an activation) remembers for
 * `subscriptionId`, and, with `carry`, writes back all this process knows (n8n saves it).
 */
export function shareRedispatches(
	scope: string,
	staticData: IDataObject,
	subscriptionId: number,
	now: number,
	carry: boolean,
): void {
	const memory = redispatchesOf(scope, subscriptionId);
	const stored = parse(readField(staticData, 'redispatchedEntries'));
	if (stored?.subscriptionId === subscriptionId)
		for (const [id, seen] of stored.entries) {
			const known = memory.get(id);
			if (!known || known.at < seen.at) memory.set(id, seen);
		}
	for (const [id, { at }] of memory) if (now - at > REMEMBER_MS) memory.delete(id);
	if (memory.size > MAX_REMEMBERED) {
		const newest = [...memory].sort((a, b) => b[1].at - a[1].at).slice(0, MAX_REMEMBERED);
		memory.clear();
		for (const [id, seen] of newest) memory.set(id, seen);
	}
	if (carry && memory.size > 0)
		writeField(staticData, 'redispatchedEntries', render(subscriptionId, memory));
}

/** This process's memory for `scope` and `subscriptionId` as a static-data field would hold it. */
export function rememberedText(scope: string, subscriptionId: number): string | undefined {
	const memory = redispatchesOf(scope, subscriptionId);
	return memory.size > 0 ? render(subscriptionId, memory) : undefined;
}

/**
 * Takes in `text` (another process's memory, as `rememberedText` gave it) and writes all this
 * process knows into `staticData`, for n8n to save.
 */
export function takeInRemembered(
	scope: string,
	staticData: IDataObject,
	subscriptionId: number,
	text: string,
	now: number,
): void {
	shareRedispatches(scope, { redispatchedEntries: text }, subscriptionId, now, false);
	shareRedispatches(scope, staticData, subscriptionId, now, true);
}
