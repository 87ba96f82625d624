// "Recover Missed Deliveries": deliveries of the trigger's own subscription that the platform
// logged as failed (n8n down, the workflow inactive) are redispatched, so each arrives again and,
// recognised by the delivery ledger, starts exactly one execution. When it runs, how far back and
// how much: docs/design.md, "Missed deliveries".
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { apiRequest, readList, clock } from '../shared/transport';
import { LEDGER_WINDOW_MS } from './deliveryLedger';

/** Failures n8n answered (404 while inactive, 5xx) are certain: redispatched up to a day back. */
export const RECOVERY_HORIZON_MS = 24 * 60 * 60_000;
/**
 * Failures without an answer (time-out, dropped connection) may have started an execution; they
 * are redispatched only while the ledger still recognises them, with a margin.
 */
export const UNANSWERED_HORIZON_MS = LEDGER_WINDOW_MS - 5 * 60_000;
export const MAX_REDISPATCHES_PER_RUN = 100;
export const MAX_LOG_ENTRIES_READ = 2_000;
/** An entry changed this recently may still be retried by the platform itself. */
export const SETTLE_MS = 30_000;
/** A redispatch that failed again is tried again after this long. */
export const REDISPATCH_AGAIN_AFTER_MS = 10 * 60_000;
/** A run looks again, SETTLE_MS apart, while entries were still settling. */
const PASSES = 3;
/** How long activation's run waits for the webhook to answer before redispatching anyway. */
const WEBHOOK_LIVE_WAIT_MS = 120_000;
const PROBE_INTERVAL_MS = 2_000;
/** Probes in a row without any answer after which the URL is taken as unreachable from n8n. */
const UNREACHABLE_PROBES = 3;

export interface DeliveryLogEntry {
	id: number;
	success?: boolean;
	status_code?: number | null;
	redispatched?: boolean;
	created_at?: string;
	updated_at?: string;
}

export type Verdict = 'redispatch' | 'unsettled' | 'skip';

/** What to do with one log entry at `now`. Pure. */
export function verdictOf(entry: DeliveryLogEntry, now: number): Verdict {
	if (entry.success !== false) return 'skip';
	const created = Date.parse(entry.created_at ?? '');
	const updated = Date.parse(entry.updated_at ?? entry.created_at ?? '');
	if (!Number.isFinite(created) || !Number.isFinite(updated)) return 'skip';
	const answered = typeof entry.status_code === 'number';
	if (now - created > (answered ? RECOVERY_HORIZON_MS : UNANSWERED_HORIZON_MS)) return 'skip';
	if (now - updated < SETTLE_MS) return 'unsettled';
	if (entry.redispatched === true && now - updated < REDISPATCH_AGAIN_AFTER_MS) return 'skip';
	return 'redispatch';
}

export interface RecoveryRun {
	redispatched: number;
	failed: number;
	read: number;
}

type Context = IHookFunctions | IWebhookFunctions;

/** One recovery run: reads the subscription's delivery log and redispatches what qualifies. */
export async function recoverMissedDeliveries(
	this: Context,
	subscriptionId: number,
): Promise<RecoveryRun> {
	const run: RecoveryRun = { redispatched: 0, failed: 0, read: 0 };
	const done = new Set<number>();
	for (let pass = 1; pass <= PASSES; pass++) {
		const now = clock().now();
		const candidates: DeliveryLogEntry[] = [];
		let unsettled = 0;
		let read = 0;
		await readList.call(this, `/${subscriptionId}/logs`, (page) => {
			let recent = 0;
			for (const entry of page as unknown as DeliveryLogEntry[]) {
				read++;
				const created = Date.parse(entry.created_at ?? '');
				if (!(now - created > RECOVERY_HORIZON_MS)) recent++;
				if (done.has(entry.id)) continue;
				const verdict = verdictOf(entry, now);
				if (verdict === 'redispatch') candidates.push(entry);
				if (verdict === 'unsettled') unsettled++;
			}
			// newest first (as seen): a page without a recent entry ends the search
			return read >= MAX_LOG_ENTRIES_READ || recent === 0;
		});
		run.read += read;
		for (const entry of candidates) {
			if (run.redispatched + run.failed >= MAX_REDISPATCHES_PER_RUN) return run;
			done.add(entry.id);
			try {
				const answer = (await apiRequest.call(
					this,
					'POST',
					'webhook',
					`/${subscriptionId}/logs/${entry.id}/redispatch`,
				)) as { data?: IDataObject };
				if (answer?.data?.success === false) run.failed++;
				else run.redispatched++;
			} catch {
				run.failed++;
			}
		}
		if (unsettled === 0 || pass === PASSES) break;
		await clock().sleep(SETTLE_MS);
	}
	return run;
}

/**
 * Waits until the webhook answers (n8n says 404 until activation has finished), so that what is
 * redispatched is not refused by n8n itself. An unsigned probe is answered 401 by the trigger and
 * starts nothing. Gives up after a while, or at once when n8n cannot reach its own public URL.
 */
async function webhookLive(this: IHookFunctions, url: string): Promise<void> {
	const deadline = clock().now() + WEBHOOK_LIVE_WAIT_MS;
	for (let unreachable = 0; unreachable < UNREACHABLE_PROBES && clock().now() < deadline; ) {
		try {
			const response = (await this.helpers.httpRequest({
				method: 'POST',
				url,
				body: {},
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				skipSslCertificateValidation: true,
				timeout: 10_000,
			})) as { statusCode?: number };
			if (response.statusCode !== 404) return;
			unreachable = 0;
		} catch {
			// no answer at all: the URL may only be reachable from outside
			unreachable++;
		}
		await clock().sleep(PROBE_INTERVAL_MS);
	}
}

function logRun(this: Context, why: string, run: RecoveryRun): void {
	const summary = `${run.redispatched} redispatched, ${run.failed} refused, ${run.read} log entries read`;
	this.logger.info(`Learning Platform Trigger: missed deliveries (${why}): ${summary}`, {
		workflowId: this.getWorkflow().id,
	});
}

function logFailure(this: Context, why: string, error: unknown): void {
	this.logger.warn(
		`Learning Platform Trigger: could not recover missed deliveries (${why}): ${(error as Error).message}`,
		{ workflowId: this.getWorkflow().id },
	);
}

/** After activation: once the webhook answers, in the background (activation does not wait). */
export function recoverAfterActivation(this: IHookFunctions, subscriptionId: number): void {
	const url = this.getNodeWebhookUrl('default') ?? '';
	const why = 'after activation';
	void (async () => {
		await webhookLive.call(this, url);
		logRun.call(this, why, await recoverMissedDeliveries.call(this, subscriptionId));
	})().catch((error: unknown) => logFailure.call(this, why, error));
}

/** Static-data field: when a delivery last started a recovery run (epoch ms). */
const SCANNED_AT = 'recoveryScannedAt';
/** At most one run per this interval from deliveries, per workflow. */
export const RESCAN_INTERVAL_MS = 15 * 60_000;
const JITTER_MS = 5_000;
/** Workflows (and nodes) this process has run a recovery for since it started. */
const scannedByThisProcess = new Set<string>();
/** n8n loads community nodes when it starts, so this is about when this process started. */
const processStartedAt = clock().now();

/**
 * From a delivery: the first one a process receives after it started (n8n 2.x calls no trigger
 * method at start-up, so deliveries missed while n8n was down are found here) unless another
 * process has started a run since then, and at most every RESCAN_INTERVAL_MS. Runs in the
 * background; the delivery is not delayed.
 */
export function recoverFromDelivery(
	this: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number,
): void {
	const scope = `${this.getWorkflow().id ?? ''}:${this.getNode().id}`;
	const now = clock().now();
	const last = Number(staticData[SCANNED_AT]);
	const due = !Number.isFinite(last) || now - last >= RESCAN_INTERVAL_MS;
	// processes restarted together: the run of whichever got a delivery first covers the others
	const firstHere = !scannedByThisProcess.has(scope) && !(last >= processStartedAt);
	scannedByThisProcess.add(scope);
	if (!due && !firstHere) return;
	staticData[SCANNED_AT] = now;
	const why = 'found from a delivery';
	void (async () => {
		// processes that start together do not all read the log at the same moment
		await clock().sleep(Math.floor(Math.random() * JITTER_MS));
		logRun.call(this, why, await recoverMissedDeliveries.call(this, subscriptionId));
	})().catch((error: unknown) => logFailure.call(this, why, error));
}
