// A refused or spent refresh token is final only once the stored credential has kept it for the
// settle time; until then another execution may still be storing the new pair. The pure decision
// is `decideAfterRefusal`; `settleRefusal` runs it against the store. docs/design.md, "Rotation".
import type { Clock } from './clock';

/** How long the stored credential must keep holding a dead token before the failure is final. */
export const REFUSAL_SETTLE_MS = 45_000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5_000;

export interface RefusalFacts {
	/** fingerprint of the dead token (with its base URL, tenancy and username) */
	deadToken: string;
	/** when this process learnt that the token is dead (refusal or spend) */
	deadSince: number;
	/** fingerprint of the credential as stored now */
	stored: string;
	now: number;
	/** pauses already taken for this token */
	pauses: number;
}

export type RefusalDecision =
	| { action: 'retry'; reason: 'moved on' }
	| { action: 'pause'; ms: number }
	| { action: 'fail'; reason: 'unchanged' };

export function decideAfterRefusal(
	facts: RefusalFacts,
	settleMs = REFUSAL_SETTLE_MS,
): RefusalDecision {
	if (facts.stored !== facts.deadToken) return { action: 'retry', reason: 'moved on' };
	const unchangedFor = facts.now - facts.deadSince;
	if (unchangedFor >= settleMs) return { action: 'fail', reason: 'unchanged' };
	const pause = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** facts.pauses);
	return { action: 'pause', ms: Math.max(1, Math.min(pause, settleMs - unchangedFor)) };
}

/**
 * Reads the stored credential (through `readStored`, which returns its fingerprint) until it moves
 * on or the settle time is over. Resolves 'moved on' or 'unchanged'; `checkCancelled` throws to
 * stop waiting when the execution was cancelled.
 */
export async function settleRefusal(
	dead: { deadToken: string; deadSince: number },
	readStored: () => Promise<string>,
	time: Clock,
	checkCancelled: () => void,
	settleMs = REFUSAL_SETTLE_MS,
): Promise<'moved on' | 'unchanged'> {
	for (let pauses = 0; ; pauses++) {
		const decision = decideAfterRefusal(
			{ ...dead, stored: await readStored(), now: time.now(), pauses },
			settleMs,
		);
		if (decision.action === 'retry') return decision.reason;
		if (decision.action === 'fail') return decision.reason;
		await time.sleep(decision.ms);
		checkCancelled();
	}
}
