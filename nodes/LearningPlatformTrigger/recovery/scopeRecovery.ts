// This process's recovery state for one trigger node (its scope: shared/helpers/triggerScope.ts),
// in one record: its run under way, when one last started here, the run marks it has learnt, its
// schedule. How the n8n processes agree through the marks: docs/design.md, "Missed deliveries",
// "Two processes, one run".
import type { IDataObject } from 'n8n-workflow';

import { readField, writeField } from '../staticData';

export interface Schedule {
	subscriptionId: number;
	/** set when it is replaced, stopped or reset: its loop ends at its next look */
	stopped: boolean;
}

export class ScopeRecovery {
	/** a run is under way in this process (one at a time per scope) */
	running = false;
	/** when a run here last started, or a delivery reserved one (written by `claimRun` only) */
	lastRunHere: number | undefined;
	/** the last run here stopped at its limits or gave way (run.ts): the next goes on at once */
	unfinished = false;
	/** this process's schedule (schedule.ts, `keepRecovering`) */
	schedule: Schedule | undefined;
	/** the newest run mark (`recoveryScannedAt`) seen here, loaded or written */
	newestMark = -Infinity;
	/** the mark of this process's own latest run */
	private ownMark: number | undefined;
	/**
	 * The platform did not reach the webhook when a run last asked (reachability.ts): recovery then
	 * only asks again, once a check, until it does or a delivery arrives.
	 */
	unreachable = false;
	/** when the platform last showed it reaches the webhook: a delivery, or a yes to the question */
	reachableAt = -Infinity;
	/** listed oldest first: the log's last page as the last run here read it */
	lastLogPage: number | undefined;
	/**
	 * Every entry of the subscription's log up to `upTo` was read by a run that found nothing
	 * there that needs, or may come to need, anything (run.ts, `judged`): later runs read only the
	 * newer entries. Only grows; shared through the static data like the marks.
	 */
	private judged: { subscriptionId: number; upTo: number } | undefined;

	/** The id up to which the log of `subscriptionId` was judged, if it was. */
	judgedUpTo(subscriptionId: number): number | undefined {
		return this.judged?.subscriptionId === subscriptionId ? this.judged.upTo : undefined;
	}

	/** A run judged the log of `subscriptionId` up to `upTo`. */
	judge(subscriptionId: number, upTo: number): void {
		const known = this.judgedUpTo(subscriptionId);
		if (known === undefined || upTo > known) this.judged = { subscriptionId, upTo };
	}

	/**
	 * Takes in what `staticData` says was judged of the log of `subscriptionId`, and, with `carry`,
	 * writes back the furthest this process knows (n8n saves it with the delivery).
	 */
	shareJudged(staticData: IDataObject, subscriptionId: number, carry: boolean): void {
		const stored = String(readField(staticData, 'recoveryJudgedTo') ?? '');
		const [sub, upTo] = stored.split('.').map((part) => parseInt(part, 36));
		if (sub === subscriptionId && Number.isFinite(upTo)) this.judge(subscriptionId, upTo);
		const known = this.judgedUpTo(subscriptionId);
		if (!carry || known === undefined) return;
		const text = `${subscriptionId.toString(36)}.${known.toString(36)}`;
		// written only when it changes: n8n saves the static data when anything is written
		if (text !== stored) writeField(staticData, 'recoveryJudgedTo', text);
	}

	/** What the platform showed at `at` about reaching the webhook (undefined: it did not tell). */
	noteReach(reached: boolean | undefined, at: number): void {
		if (reached === undefined) return;
		this.unreachable = !reached;
		if (reached) this.reachableAt = Math.max(this.reachableAt, at);
	}

	/**
	 * The newest run mark known here, after taking in the one `staticData` holds: kept, because
	 * another process's whole-field save can take a newer mark back.
	 */
	learnMark(staticData: IDataObject): number {
		const loaded = Number(readField(staticData, 'recoveryScannedAt'));
		if (Number.isFinite(loaded) && loaded > this.newestMark) this.newestMark = loaded;
		return this.newestMark;
	}

	markRun(staticData: IDataObject, at: number): void {
		writeField(staticData, 'recoveryScannedAt', at);
		this.newestMark = at;
		this.ownMark = at;
	}

	/**
	 * Whether another process has started a run after the one of this process marked `mark`: that
	 * later run read the log afresh and covers the rest, so this one stops.
	 */
	superseded(mark: number): boolean {
		return this.newestMark > mark && this.newestMark !== this.ownMark;
	}

	/**
	 * False while a run is under way here (it covers this one). Otherwise `at` becomes the last run
	 * here, which the schedule counts from: a run starting now, or one a delivery reserves to start
	 * after its delay.
	 */
	claimRun(at: number): boolean {
		if (this.running) return false;
		this.lastRunHere = at;
		return true;
	}

	/** When a run last started: here, or in another process as learnt from the static data. */
	lastRunKnown(): number {
		return Math.max(this.lastRunHere ?? -Infinity, this.newestMark);
	}

	/** Stops this process's schedule, if it has one. */
	endSchedule(): void {
		if (this.schedule) this.schedule.stopped = true;
		this.schedule = undefined;
	}

	/** As a process that has run nothing here: for tests. */
	forget(): void {
		this.endSchedule();
		this.running = false;
		this.lastRunHere = undefined;
		this.unfinished = false;
		this.newestMark = -Infinity;
		this.ownMark = undefined;
		this.unreachable = false;
		this.reachableAt = -Infinity;
		this.judged = undefined;
		this.lastLogPage = undefined;
	}
}

// Process-wide. A reset for tests forgets each record in place and never replaces it: a run or a
// schedule under way holds its scope's record, and must see the reset.
const scopes = new Map<string, ScopeRecovery>();

export function recoveryOf(scope: string): ScopeRecovery {
	let recovery = scopes.get(scope);
	if (!recovery) scopes.set(scope, (recovery = new ScopeRecovery()));
	return recovery;
}

/** For tests: every scope as in a process that has run nothing. */
export function forgetEveryScope(): void {
	for (const recovery of scopes.values()) recovery.forget();
}
