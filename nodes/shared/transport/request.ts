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
import {
	CREDENTIAL_TYPE,
	rateLimitKey,
	rootUrl,
	type ApiRoot,
	type ConnectionSettings,
} from './config';
import type { LearningPlatformContext } from './context';
import { inspectFailure, type FailedRequest } from './failureFacts';
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
	type CallerPhrasing,
	type FailureNotice,
} from './wording';

export interface ApiRequestOptions extends CallerPhrasing {
	qs?: IDataObject;
	body?: IDataObject;
	itemIndex?: number;
	/** return HTTP-200 `status: 'Failed'` bodies instead of throwing (the caller words them) */
	returnFailed?: boolean;
	/** resolve `{ statusCode, headers, body }` */
	fullResponse?: boolean;
}

interface FullResponse<T = unknown> {
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
	const settings = await connectionFor(this, options.itemIndex);
	const call = new Call(this as CancellableContext, settings, method, root, path, options);
	for (;;) {
		const ticket = await call.takeSlot();
		const sent = await call.send(ticket);
		if ('response' in sent) return await call.result<T>(sent.response);
		await call.repeatOrThrow(sent.facts);
	}
}

/** What one call knows across its attempts, and each step of an attempt. */
class Call {
	private readonly attempts: Attempts = {
		transient: 0,
		rateLimit: 0,
		exchange: 0,
		credentialMoves: 0,
	};
	// optional: n8n versions without cancel signals let a wait run to its end
	private readonly signal: AbortSignal | undefined;

	constructor(
		private readonly ctx: CancellableContext,
		private readonly settings: ConnectionSettings,
		private readonly method: IHttpRequestMethods,
		private readonly root: ApiRoot,
		private readonly path: string,
		private readonly options: ApiRequestOptions,
	) {
		this.signal = ctx.getExecutionCancelSignal?.();
	}

	/** Waits for a slot in the API user's rate window. */
	async takeSlot(): Promise<RateTicket> {
		try {
			return await acquireSlot(rateLimitKey(this.settings), {
				isCancelled: () => this.isCancelled(),
				onWait: (ms, reason) => this.log(`waiting ${ms} ms before ${this.what()} (${reason})`),
			});
		} catch (error) {
			throw apiFailure(
				this.ctx.getNode(),
				{ message: (error as Error).message },
				{ itemIndex: this.options.itemIndex },
			);
		}
	}

	/** Sends the request and teaches the limiter what came back; a cancelled call throws here. */
	async send(ticket: RateTicket): Promise<{ response: FullResponse } | { facts: FailedRequest }> {
		let response: FullResponse;
		try {
			response = (await this.ctx.helpers.httpRequestWithAuthentication.call(
				this.ctx as IExecuteFunctions,
				CREDENTIAL_TYPE,
				requestOptions(
					this.method,
					`${rootUrl(this.settings, this.root)}${this.path}`,
					this.options,
				),
			)) as FullResponse;
		} catch (error) {
			const facts = inspectFailure(error);
			if (facts.cancelled || this.isCancelled()) {
				settleSlot(ticket);
				throw await this.fail(facts, { message: 'The request was cancelled' });
			}
			// an exchange failure never reached the API; an answer teaches the limiter
			if (facts.authFailure) releaseSlot(ticket);
			else if (facts.status !== undefined) recordAnswer(ticket, facts);
			else settleSlot(ticket);
			return { facts };
		}
		recordAnswer(ticket, { status: response.statusCode, headers: response.headers });
		return { response };
	}

	/** An answer: its body, unless the body says `status: "Failed"` and the caller did not ask for that. */
	async result<T>(response: FullResponse): Promise<T> {
		const body = response.body as IDataObject | undefined;
		if (!this.options.returnFailed && isFailedStatus(body)) {
			throw await this.fail(
				{ message: '', cancelled: false, status: response.statusCode, body },
				failedStatus(body.errors as IDataObject | undefined),
			);
		}
		if (this.options.fullResponse) {
			const { statusCode, headers } = response;
			return { statusCode, headers, body: response.body } as T;
		}
		return response.body as T;
	}

	/** A failure: returns when ./retryPolicy.ts (or a moved-on credential) says to repeat, else throws. */
	async repeatOrThrow(facts: FailedRequest): Promise<void> {
		const action = nextAction(facts, this.method, this.attempts);
		if (action.kind === 'retry') {
			this.attempts[action.counter]++;
			this.log(`${action.reason} on ${this.what()}; retry in ${action.pauseMs} ms`);
			await clock().sleep(action.pauseMs);
			this.checkCancelled();
			return;
		}
		if (action.kind === 'retryAfterRateLimit') {
			this.attempts.rateLimit++;
			this.log(`429 on ${this.what()}; retrying after the window`);
			return;
		}
		if (action.kind === 'awaitCredential' && facts.authFailure?.dead) {
			if ((await this.settleDeadToken(facts.authFailure.dead)) === 'moved on') return;
		}
		if (facts.authFailure) {
			const { kind, message, description } = facts.authFailure;
			const dead = kind === 'refused' || kind === 'stale';
			throw await this.fail(
				facts,
				dead ? refreshTokenRejected(this.settings) : { message, description },
			);
		}
		throw await this.fail(facts);
	}

	/** Waits (up to the settle time) for the stored credential to move past a dead refresh token. */
	private async settleDeadToken(dead: { token: string; since: number }) {
		const { itemIndex } = this.options;
		const outcome = await settleRefusal(
			{ deadToken: dead.token, deadSince: dead.since },
			async () => credentialFingerprint(await storedCredential(this.ctx, itemIndex)),
			clock(),
			() => this.checkCancelled(),
		);
		if (outcome === 'moved on') {
			this.attempts.credentialMoves++;
			this.log(
				`the stored credential moved on; repeating the request (${this.attempts.credentialMoves})`,
			);
		} else {
			this.log(
				`the stored credential kept the dead refresh token for ${REFUSAL_SETTLE_MS / 1000} s`,
			);
		}
		return outcome;
	}

	private async fail(facts: FailedRequest, notice?: FailureNotice) {
		const callFacts = {
			settings: this.settings,
			method: this.method,
			root: this.root,
			path: this.path,
			retries: this.attempts.transient,
			rateLimitRetries: this.attempts.rateLimit,
		};
		return await failure(
			this.ctx,
			this.options,
			facts,
			notice ?? requestFailure(facts, callFacts, this.options),
		);
	}

	private isCancelled(): boolean {
		return this.signal?.aborted === true;
	}

	private checkCancelled(): void {
		if (this.isCancelled()) {
			throw apiFailure(this.ctx.getNode(), cancelled, { itemIndex: this.options.itemIndex });
		}
	}

	private what(): string {
		return `${this.method} ${this.root}${this.path}`;
	}

	private log(message: string): void {
		try {
			this.ctx.logger?.debug(`Learning Platform: ${message}`);
		} catch {
			// logging must never break a request
		}
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
function isFailedStatus(body: unknown): body is IDataObject & { status: 'Failed' } {
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
	facts: FailedRequest,
	notice: FailureNotice,
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
	return apiFailure(ctx.getNode(), notice, {
		itemIndex: options.itemIndex,
		body: facts.body,
		secrets,
	});
}

/** The HTTP status of a failed call (from the error this module threw), if it got an answer. */
export function statusOf(error: unknown): number | undefined {
	return inspectFailure(error).status;
}
