// The request loop: every call to the platform goes through n8n's `httpRequestWithAuthentication`
// (never the deprecated `requestWithAuthentication`, which refreshes after ANY error and would
// spend the single-use refresh token), paced per API user, repeated when ./retryPolicy.ts says so,
// and worded by ./wording.ts when it fails. Design notes: docs/design.md.
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
} from 'n8n-workflow';

import { clock } from './clock';
import { CREDENTIAL_TYPE, rateLimitKey, rootUrl, type ApiRoot } from './config';
import type { LearningPlatformContext } from './context';
import { inspectFailure, type FailureFacts } from './failureFacts';
import { acquireSlot, recordAnswer, releaseSlot, settleSlot, type RateTicket } from './rateLimiter';
import { REFUSAL_SETTLE_MS, settleRefusal } from './refusal';
import { isIdempotent, nextAction, type Attempts } from './retryPolicy';
import { connectionFor, storedCredential } from './settings';
import { credentialFingerprint } from './tokenExchange';
import {
	apiFailure,
	cancelled,
	failedStatus,
	refreshTokenRejected,
	requestFailure,
	type CallWords,
	type Words,
} from './wording';

export interface ApiRequestOptions extends CallWords {
	qs?: IDataObject;
	body?: IDataObject;
	itemIndex?: number;
	/** return HTTP-200 `status: 'Failed'` bodies instead of throwing (the caller words them) */
	returnFailed?: boolean;
	/** resolve `{ statusCode, headers, body }` */
	fullResponse?: boolean;
}

export interface FullResponse<T = unknown> {
	statusCode: number;
	headers: IDataObject;
	body: T;
}

const REQUEST_TIMEOUT_MS = 120_000;

type CancellableContext = LearningPlatformContext & {
	getExecutionCancelSignal?: () => AbortSignal | undefined;
};

/**
 * One API call. `path` is appended to the root ('' or '/events', '/123/logs', ...). Resolves the
 * parsed body (or `{statusCode, headers, body}` with `fullResponse`).
 */
export async function apiRequest<T = IDataObject>(
	this: LearningPlatformContext,
	method: IHttpRequestMethods,
	root: ApiRoot,
	path: string,
	options: ApiRequestOptions = {},
): Promise<T> {
	const ctx = this as CancellableContext;
	const { itemIndex } = options;
	const settings = await connectionFor(ctx, itemIndex);
	const bucket = rateLimitKey(settings);
	// optional: n8n versions without cancel signals let a wait run to its end
	const signal = ctx.getExecutionCancelSignal?.();
	const isCancelled = () => signal?.aborted === true;
	const log = (message: string) => {
		try {
			ctx.logger?.debug(`Learning Platform: ${message}`);
		} catch {
			// logging must never break a request
		}
	};
	const attempts: Attempts = { transient: 0, rateLimit: 0, exchange: 0, credentialMoves: 0 };
	const fail = async (facts: FailureFacts, words?: Words) =>
		await failure(ctx, options, facts, words ?? requestFailure(facts, callFacts(), options));
	const callFacts = () => ({
		settings,
		method,
		root,
		path,
		retries: attempts.transient,
		rateLimitRetries: attempts.rateLimit,
	});
	const checkCancelled = () => {
		if (isCancelled()) throw apiFailure(ctx.getNode(), cancelled, { itemIndex });
	};

	for (;;) {
		let ticket: RateTicket;
		try {
			ticket = await acquireSlot(bucket, {
				isCancelled,
				onWait: (ms, reason) => log(`waiting ${ms} ms before ${method} ${root}${path} (${reason})`),
			});
		} catch (error) {
			throw apiFailure(ctx.getNode(), { message: (error as Error).message }, { itemIndex });
		}

		let response: FullResponse;
		try {
			response = (await ctx.helpers.httpRequestWithAuthentication.call(
				ctx as IExecuteFunctions,
				CREDENTIAL_TYPE,
				requestOptions(method, `${rootUrl(settings, root)}${path}`, options),
			)) as FullResponse;
		} catch (error) {
			const facts = inspectFailure(error);
			if (facts.cancelled || isCancelled()) {
				settleSlot(ticket);
				throw await fail(facts, { message: 'The request was cancelled' });
			}
			// an exchange failure never reached the API; an answer teaches the limiter
			if (facts.authFailure) releaseSlot(ticket);
			else if (facts.status !== undefined) recordAnswer(ticket, facts);
			else settleSlot(ticket);

			const action = nextAction(facts, method, attempts);
			if (action.kind === 'retry') {
				attempts[action.counter]++;
				log(`${action.reason} on ${method} ${root}${path}; retry in ${action.pauseMs} ms`);
				await clock().sleep(action.pauseMs);
				checkCancelled();
				continue;
			}
			if (action.kind === 'retryAfterRateLimit') {
				attempts.rateLimit++;
				log(`429 on ${method} ${root}${path}; retrying after the window`);
				continue;
			}
			if (action.kind === 'awaitCredential' && facts.authFailure?.dead) {
				const { dead } = facts.authFailure;
				const outcome = await settleRefusal(
					{ deadToken: dead.token, deadSince: dead.since },
					async () => credentialFingerprint(await storedCredential(ctx, itemIndex)),
					clock(),
					checkCancelled,
				);
				if (outcome === 'moved on') {
					attempts.credentialMoves++;
					log(
						`the stored credential moved on; repeating the request (${attempts.credentialMoves})`,
					);
					continue;
				}
				log(`the stored credential kept the dead refresh token for ${REFUSAL_SETTLE_MS / 1000} s`);
			}
			if (facts.authFailure) {
				const { kind, message, description } = facts.authFailure;
				const dead = kind === 'refused' || kind === 'stale';
				throw await fail(facts, dead ? refreshTokenRejected(settings) : { message, description });
			}
			throw await fail(facts);
		}

		recordAnswer(ticket, { status: response.statusCode, headers: response.headers });
		const body = response.body as IDataObject | undefined;
		if (!options.returnFailed && isFailedStatus(body)) {
			throw await fail(
				{ message: '', cancelled: false, status: response.statusCode, body },
				failedStatus(body.errors as IDataObject | undefined),
			);
		}
		if (options.fullResponse) {
			const { statusCode, headers } = response;
			return { statusCode, headers, body: response.body } as T;
		}
		return response.body as T;
	}
}

function requestOptions(
	method: IHttpRequestMethods,
	url: string,
	options: ApiRequestOptions,
): IHttpRequestOptions {
	const request: IHttpRequestOptions = {
		method,
		url,
		headers: { Accept: 'application/json' },
		json: true,
		returnFullResponse: true,
		timeout: REQUEST_TIMEOUT_MS,
	};
	if (options.qs && Object.keys(options.qs).length) request.qs = options.qs;
	if (options.body !== undefined && !isIdempotent(method)) {
		request.body = options.body;
		(request.headers as IDataObject)['Content-Type'] = 'application/json';
	}
	return request;
}

/** An HTTP-200 answer whose body says `status: "Failed"` (the reports' and the feed's refusals). */
export function isFailedStatus(body: unknown): body is IDataObject & { status: 'Failed' } {
	return (
		!!body &&
		typeof body === 'object' &&
		!Array.isArray(body) &&
		(body as IDataObject).status === 'Failed'
	);
}

/** The error for a failed call, with every secret this call could have seen removed. */
async function failure(
	ctx: LearningPlatformContext,
	options: ApiRequestOptions,
	facts: FailureFacts,
	words: Words,
) {
	const secrets: string[] = [];
	const push = (value: unknown) => {
		if (typeof value === 'string' && value) secrets.push(value);
	};
	push(options.body?.signing_key);
	push(options.body?.auth_token);
	try {
		// the stored values now: rotation may have changed them since the request began
		const current = await storedCredential(ctx, options.itemIndex);
		push(current.refreshToken);
		push(current.apiKey);
	} catch {
		// pattern-based scrubbing still applies
	}
	return apiFailure(ctx.getNode(), words, {
		itemIndex: options.itemIndex,
		body: facts.body,
		secrets,
	});
}

/** The HTTP status of a failed call (from the error this module threw), if it got an answer. */
export function statusOf(error: unknown): number | undefined {
	return inspectFailure(error).status;
}
