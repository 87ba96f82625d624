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

interface Unsaved {
	staticData: IDataObject;
	response: AttemptResponse;
}

let unsaved: Unsaved[] = [];

/**
 * Marks `staticData` changed again on the next timer turn, unless n8n has answered `response`
 * by then (it answers after its save). n8n's reset comes in the promise jobs that follow
 * `webhook()`'s return, before any timer; its save comes after the execution's database insert,
 * so after that turn. One timer serves every delivery of a turn: no loop while deliveries wait.
 * The e2e triggers suite checks, in each tested n8n, that the save holds the delivery.
 */
export function keepChangedUntilAnswered(staticData: IDataObject, response: AttemptResponse): void {
	unsaved.push({ staticData, response });
	if (unsaved.length === 1) void sleep(0).then(markUnsaved);
}

function markUnsaved(): void {
	const waiting = unsaved;
	unsaved = [];
	for (const { staticData, response } of waiting)
		if (!response.writableEnded) markChanged(staticData);
}
