// What a delivery that starts an execution writes into static data (the ledger's entry, a run
// mark, the redispatch memory) reaches the database only if n8n still sees it as changed when it
// saves, after the execution exists. n8n 2.x (2.40.7, 2.41.1) starts the execution by building a
// second `Workflow` over the very object the delivery wrote into
// (`WorkflowRunner.establishContextForPersistence`), and a new `Workflow` marks its static data
// unchanged: the save then writes nothing, and the writes live only in this process's memory, lost
// at its restart and never seen by the other webhook processes. n8n 1.x builds no such second
// `Workflow` and needs none of this. docs/design.md, "Exactly once".
import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { markChanged } from '../staticData';
import type { AttemptResponse } from './ledger';

/** Between n8n's reset and its save lie a database read, an insert and the queue: several ms. */
const REMARK_INTERVAL_MS = 1;
/** n8n answers (after its save) within seconds; past this the answer is not waited for. */
const REMARK_FOR_AT_MOST_MS = 60_000;

interface Unsaved {
	staticData: IDataObject;
	response: AttemptResponse;
	until: number;
}

const unsaved = new Set<Unsaved>();
let remarking = false;

/**
 * Marks `staticData` changed again every millisecond until n8n has answered `response` (it answers
 * after its save; `writableEnded` holds from then on, even when the platform hung up first), so
 * that n8n's save finds it changed whenever n8n's reset came. One loop serves every delivery
 * waiting in this process. Wall-clock time: this is about the order of n8n's steps, not about
 * how long the platform waits.
 */
export function keepChangedUntilAnswered(staticData: IDataObject, response: AttemptResponse): void {
	unsaved.add({ staticData, response, until: Date.now() + REMARK_FOR_AT_MOST_MS });
	if (!remarking) void remarkWhileUnsaved();
}

async function remarkWhileUnsaved(): Promise<void> {
	remarking = true;
	try {
		while (unsaved.size > 0) {
			// a timer's turn comes after n8n's reset, which happens before n8n's first wait for I/O
			await sleep(REMARK_INTERVAL_MS);
			const now = Date.now();
			for (const entry of unsaved) {
				if (entry.response.writableEnded || now > entry.until) unsaved.delete(entry);
				else markChanged(entry.staticData);
			}
		}
	} finally {
		remarking = false;
	}
}
