/**
 * What to do when the credential's exchange reports that the refresh token it was handed is
 * dead: refused by the platform (401) or already spent by this process.
 *
 * A refusal alone does not tell "really dead" from "another execution rotated it first": the
 * winner of a rotation race (in this process or in another n8n process) is usually still storing
 * the new pair, and on a loaded machine or a remote database that store can take seconds. n8n
 * hands `preAuthentication` the credential it loaded before the request, so only a fresh read of
 * the stored credential shows whether it has moved on. Hence the rule:
 *
 * - the stored credential now holds a different refresh token (or other connection fields) than
 *   the dead one: it moved on; repeat the request at once (n8n loads the new pair);
 * - it still holds the dead token: read it again after a growing pause (0.25 s, 0.5 s, 1 s ... 5 s);
 * - it has held the dead token for `REFUSAL_SETTLE_MS` since the refusal: the token is really dead
 *   (revoked, spent elsewhere without a store, or issued for another user or tenancy); fail with
 *   the error that asks for a new refresh token. Nothing stored is changed on any path.
 *
 * `decideAfterRefusal` is the pure decision; `settleRefusal` runs it against the store.
 */
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
