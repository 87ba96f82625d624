import type { IExecuteFunctions, NodeExecutionHint } from 'n8n-workflow';

/**
 * Hints that concern a whole run rather than one item: n8n keeps every hint it is given, so a
 * hint added per item would repeat once per item. The context object lives for one node run,
 * which makes it the key of "already said in this run".
 */
const given = new WeakMap<IExecuteFunctions, Set<string>>();

/** Adds `hint` unless a hint with the same `key` was added earlier in this run. */
export function hintOnce(context: IExecuteFunctions, key: string, hint: NodeExecutionHint): void {
	let keys = given.get(context);
	if (!keys) {
		keys = new Set();
		given.set(context, keys);
	}
	if (keys.has(key)) return;
	keys.add(key);
	context.addExecutionHints(hint);
}
