// The core's process-wide state (shared by all executions and nodes in one n8n process), in one
// list, each with its reset. For tests only: no shipped file imports this one, and the transport's
// face does not export it. Four more places of process-wide state belong to the webhook trigger
// (the recovery schedule, the delivery ledger, the redispatch memory, the recovery pace):
// docs/layout.md.
import { resetClock } from './clock';
import { resetFailureFacts } from './failureFacts';
import { resetRateLimiter } from './rateLimiter';
import { resetTokenExchangeState } from './tokenExchange';

export interface ProcessState {
	/** the file that holds it, under nodes/shared/transport/ */
	file: string;
	/** what it remembers */
	holds: string;
	/** back to the state at load; for tests */
	reset: () => void;
}

export const coreProcessState: readonly ProcessState[] = [
	{
		file: 'clock.ts',
		holds: 'the clock in force (the system clock unless a test installed another)',
		reset: resetClock,
	},
	{
		file: 'rateLimiter.ts',
		holds: 'the rate windows, one bucket per API user',
		reset: resetRateLimiter,
	},
	{
		file: 'tokenExchange.ts',
		holds: 'refresh-token exchanges in flight, tokens spent and tokens refused',
		reset: resetTokenExchangeState,
	},
	{
		file: 'failureFacts.ts',
		holds: 'recent credential-exchange failures, found again by their message',
		reset: resetFailureFacts,
	},
];

/** For tests: every piece of the core's process-wide state back to its state at load. */
export function resetCoreProcessState(): void {
	for (const state of coreProcessState) state.reset();
}
