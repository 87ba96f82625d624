import type { RowResult } from '../lib/common';
export async function run(): Promise<RowResult> {
	return { id: 'trigger', title: 'trigger', mode: '', settings: {}, metrics: [], notes: [], durationMs: 0, error: 'not written yet' };
}
