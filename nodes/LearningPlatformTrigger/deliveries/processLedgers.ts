// The delivery ledgers of one n8n process: one per trigger node of a workflow. Each writes only
// its own deliveries into its own node's static data and keeps its own caps, so one workflow's
// traffic (a user sync of thousands of events) never pushes another's deliveries out of what it
// remembers or saves. docs/design.md, "Exactly once".
import { clock, type Clock } from '../../shared/transport';
import { DeliveryLedger } from './ledger';

export class ProcessLedgers {
	private readonly byScope = new Map<string, DeliveryLedger>();

	constructor(private readonly time: () => Clock = clock) {}

	/** The ledger of one trigger node of one workflow (`workflowId:nodeId`). */
	of(scope: string): DeliveryLedger {
		let ledger = this.byScope.get(scope);
		if (ledger === undefined) this.byScope.set(scope, (ledger = new DeliveryLedger(this.time)));
		return ledger;
	}

	/** Deliveries remembered, all ledgers together. */
	get size(): number {
		let size = 0;
		for (const ledger of this.byScope.values()) size += ledger.size;
		return size;
	}
}

let current = new ProcessLedgers();

/** This process's ledgers. */
export function thisProcessLedgers(): ProcessLedgers {
	return current;
}

/** For tests: this process's ledgers start empty, as in a freshly started process. */
export function resetDeliveryLedger(): void {
	current = new ProcessLedgers();
}

/** For tests: plays another n8n process until the returned function is called. */
export function useLedgers(ledgers: ProcessLedgers): () => void {
	const previous = current;
	current = ledgers;
	return () => {
		current = previous;
	};
}
