import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import {
	apiFailure,
	apiRequest,
	clock,
	failedStatusMessage,
	operationFailure,
	type FailureNotice,
} from '../../shared/transport';
import { enabledFlags, simplifyRecords } from '../../shared/helpers';
import { boundedForModel } from './toolOutput';

// The asynchronous reports: submit a request, then poll it by `requestid` until `Complete`. Every
// poll is a normal request, so it is paced with every other request of the API user.

/** One report type, as its operation file declares it and `actions/report/reports.ts` lists it. */
export interface Report {
	/** the API path segment: `{report_root}/<type>` */
	type: string;
	/** as the user reads it: "the Attendance report" */
	label: string;
	/** what a simplified record keeps */
	simplifiedFields: readonly string[];
}

/**
 * When to poll, counted from the start of the wait: 1 s, 2 s, 4 s, 8 s... (each poll at twice the
 * time already waited), then every 30 s. The API gives no hint of when a report will be ready, and
 * every poll spends the key's 60 requests a minute: doubling keeps the polls to about
 * 1 + log2(seconds waited) while a report is never picked up later than it had already taken
 * (or 30 s).
 */
const FIRST_POLL_AFTER_MS = 1000;
export const MAX_POLL_INTERVAL_MS = 30_000;

export function nextPollOffsetMs(previousOffsetMs: number): number {
	if (previousOffsetMs <= 0) return FIRST_POLL_AFTER_MS;
	return previousOffsetMs + Math.min(previousOffsetMs, MAX_POLL_INTERVAL_MS);
}
export const DEFAULT_TIMEOUT_SECONDS = 300;

export interface ReportEnvelope {
	status?: string;
	requestid?: number | string;
	data?: IDataObject[];
	errors?: IDataObject;
}

export interface WaitOptions {
	waitForResult: boolean;
	timeoutSeconds: number;
}

export function readWaitOptions(options: IDataObject): WaitOptions {
	const timeout = Number(options.timeout ?? DEFAULT_TIMEOUT_SECONDS);
	return {
		waitForResult: options.waitForResult !== false,
		timeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS,
	};
}

async function requestReport(
	this: IExecuteFunctions,
	report: Report,
	qs: IDataObject,
	itemIndex: number,
): Promise<ReportEnvelope> {
	const envelope = (await apiRequest.call(this, 'GET', 'report', `/${report.type}`, {
		qs,
		itemIndex,
		returnFailed: true,
	})) as ReportEnvelope;
	if (envelope?.status === 'Failed') {
		const failed = reportFailed(report.label, envelope.requestid, envelope.errors);
		throw apiFailure(this.getNode(), failed, { itemIndex, body: envelope });
	}
	return envelope;
}

/**
 * Polls `requestid` until `Complete` (or once, when not waiting). Returns the records, or
 * `{requestid, status}` when the caller does not wait and the report is not ready.
 */
export async function pollReport(
	this: IExecuteFunctions,
	report: Report,
	first: ReportEnvelope | undefined,
	requestId: number,
	wait: WaitOptions,
	itemIndex: number,
): Promise<IDataObject[]> {
	let envelope =
		first ?? (await requestReport.call(this, report, { requestid: requestId }, itemIndex));
	const time = clock();
	const waitStartedAt = time.now();
	const deadline = waitStartedAt + wait.timeoutSeconds * 1000;
	let pollOffsetMs = 0;

	while (envelope.status !== 'Complete') {
		if (!wait.waitForResult)
			return [{ requestid: requestId, status: envelope.status ?? 'Processing' }];
		const remaining = deadline - time.now();
		if (remaining <= 0) {
			const notReady = reportNotReady(report.label, requestId, wait.timeoutSeconds);
			throw operationFailure(this.getNode(), notReady, itemIndex);
		}
		// optional: an n8n without cancel signals simply lets the wait run to its time-out
		if (this.getExecutionCancelSignal?.()?.aborted) {
			throw operationFailure(this.getNode(), reportWaitCancelled(requestId), itemIndex);
		}
		pollOffsetMs = nextPollOffsetMs(pollOffsetMs);
		await time.sleep(Math.max(0, Math.min(waitStartedAt + pollOffsetMs - time.now(), remaining)));
		envelope = await requestReport.call(this, report, { requestid: requestId }, itemIndex);
	}

	return Array.isArray(envelope.data) ? envelope.data : [];
}

/** Submits a new report request and (by default) waits for its records. */
async function runReport(
	this: IExecuteFunctions,
	report: Report,
	filters: IDataObject,
	wait: WaitOptions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const submitted = await requestReport.call(this, report, filters, itemIndex);
	if (submitted.status === 'Complete') return Array.isArray(submitted.data) ? submitted.data : [];
	const requestId = Number(submitted.requestid);
	if (!Number.isFinite(requestId)) {
		const withoutId = reportWithoutRequestId(report.label, submitted.status);
		throw apiFailure(this.getNode(), withoutId, { itemIndex, body: submitted });
	}
	return await pollReport.call(this, report, submitted, requestId, wait, itemIndex);
}

/**
 * One input item's report: `filters` (undefined ones are not sent) plus the `flags` switched on
 * under "Options", submitted and (by default) waited for with the item's wait options; the
 * records come back simplified when Simplify is on.
 */
export async function runReportForItem(
	this: IExecuteFunctions,
	itemIndex: number,
	report: Report,
	flags: readonly string[],
	filters: IDataObject,
): Promise<IDataObject[]> {
	const given = Object.entries(filters).filter(([, value]) => value !== undefined);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const qs: IDataObject = { ...Object.fromEntries(given), ...enabledFlags(options, flags) };
	const records = await runReport.call(this, report, qs, readWaitOptions(options), itemIndex);
	const simplify = this.getNodeParameter('simple', itemIndex, true) as boolean;
	// Not waiting and not ready: the `{requestid, status}` item is not a record; pass it on as is.
	if (isPendingItem(records)) return records;
	const shaped = simplify ? simplifyRecords(records, report.simplifiedFields) : records;
	return boundedForModel.call(this, itemIndex, shaped, REPORT_ADVICE);
}

/** What a model is told when a report had more records than it was given, or none. */
export const REPORT_ADVICE = {
	more: 'Ask for a narrower report (one learner with User ID, or one course with Content ID).',
	none: 'Suspended learners are left out unless the report includes suspended users; check the IDs with the content report.',
};

/** The single `{requestid, status}` item `pollReport` returns when it does not wait. */
function isPendingItem(records: IDataObject[]): boolean {
	return records.length === 1 && Object.keys(records[0]).sort().join(',') === 'requestid,status';
}

// ---- The reports' own failures -------------------------------------------------------------------

function reportFailed(
	label: string,
	requestId: unknown,
	errors: IDataObject | undefined,
): FailureNotice {
	const requestPart = requestId !== undefined ? ` (request ID ${String(requestId)})` : '';
	return { message: `The ${label} report failed${requestPart}: ${failedStatusMessage(errors)}` };
}

function reportWithoutRequestId(label: string, status: unknown): FailureNotice {
	return {
		message: `The ${label} report was accepted without a request ID (status "${String(status)}")`,
	};
}

function reportNotReady(label: string, requestId: number, timeoutSeconds: number): FailureNotice {
	return {
		message: `The ${label} report (request ID ${requestId}) was not ready within ${timeoutSeconds} seconds`,
		description: `The request is still processing on the server. Fetch it later with Resource "Report", Operation "Get Result", Report Type "${label}" and Request ID ${requestId}, or raise the "Timeout (Seconds)" option.`,
	};
}

function reportWaitCancelled(requestId: number): FailureNotice {
	return { message: `Execution cancelled while waiting for request ID ${requestId}` };
}
