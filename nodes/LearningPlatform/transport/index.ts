/**
 * The only module that talks HTTP to the learning platform for every node of this package.
 *
 * Every request goes through n8n's `httpRequestWithAuthentication('learningPlatformApi', ...)`
 * (never the deprecated `requestWithAuthentication`, which refreshes after ANY error and would
 * spend the single-use refresh token on a 404 or 500). Around it this module adds:
 * - pacing per API user, shared by all executions in the process (./rateLimiter.ts);
 * - retries, decided by ./retryPolicy.ts: 429 always (after the window), network errors and 5xx
 *   for GET only; POST, PATCH, PUT and DELETE only when the server certainly did not process them;
 * - credential rotation races: when the credential's exchange reports a dead refresh token
 *   (spent here or refused, ./tokenExchange.ts), the stored credential is read again until it
 *   moves on (then the call is repeated: n8n reloads the stored credential on each call) or has
 *   held the dead token for the settle time (./refusal.ts); a failed exchange is retried;
 * - errors: the one place that words a failed call as a `NodeApiError` that says what to do,
 *   with the item index and never a secret (refresh token, API key, signing key, auth token) in
 *   message, description or data. Operations add their own words through options (what a 404
 *   means, what the call was doing when a 422 came back); callers that must branch on an outcome
 *   read it with `statusOf` / `rejectionOf`, never from the text.
 *
 * The User-Agent is added by the credential's `authenticate`, which every request here passes.
 */
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, sleep } from 'n8n-workflow';

import {
	CREDENTIAL_TYPE,
	apiUserLabel,
	connectionSettings,
	rateLimitKey,
	rootUrl,
	type ApiRoot,
	type ConnectionSettings,
} from './config';
import {
	REJECTION_ADVICE,
	classifyRejection,
	failedStatusMessage,
	inspectFailure,
	scrubObject,
	scrubSecrets,
	serverMessage,
	validationDetails,
	type FailureFacts,
	type Rejection,
} from './errors';
import { clock } from './clock';
import { acquireSlot, recordAnswer, releaseSlot, settleSlot, type RateTicket } from './rateLimiter';
import { REFUSAL_SETTLE_MS, settleRefusal } from './refusal';
import {
	TRANSIENT_NETWORK_MESSAGE,
	isIdempotent,
	isRepeatable,
	nextAction,
	type Attempts,
} from './retryPolicy';
import { credentialFingerprint, REJECTED_DESCRIPTION, rejectedMessage } from './tokenExchange';

export type { ApiRoot } from './config';
export { failedStatusMessage } from './errors';
export type { Rejection } from './errors';
export { testLearningPlatformCredential } from './credentialTest';
export { USER_AGENT } from './userAgent';

export type LearningPlatformContext =
	| IExecuteFunctions
	| ILoadOptionsFunctions
	| IHookFunctions
	| IPollFunctions
	| IWebhookFunctions;

export interface ApiRequestOptions {
	qs?: IDataObject;
	body?: IDataObject;
	itemIndex?: number;
	/** return HTTP-200 `status: 'Failed'` bodies instead of throwing (the feed uses this to detect errors.cursor) */
	returnFailed?: boolean;
	/** resolve `{ statusCode, headers, body }` */
	fullResponse?: boolean;
	/**
	 * What a 404 means for this call, in the user's terms (e.g. `No learner "jane" or no course
	 * with ID 87`); the status and the server's own text are appended. Without it a 404 is worded
	 * generically.
	 */
	notFoundMessage?: string;
	/** What to check after such a 404 (replaces the generic advice). */
	notFoundDescription?: string;
	/**
	 * What the call does, in the user's words (`create the webhook subscription`): a 422 is then
	 * worded "Could not <action>: <the server's reason>", with advice for the case it is.
	 */
	action?: string;
}

export interface FullResponse<T = unknown> {
	statusCode: number;
	headers: IDataObject;
	body: T;
}

const REQUEST_TIMEOUT_MS = 120_000;

type AnyContext = LearningPlatformContext & {
	getCredentials(type: string, itemIndex?: number): Promise<ICredentialDataDecryptedObject>;
	getExecutionCancelSignal?: () => AbortSignal | undefined;
};

/**
 * One API call. `path` is appended to the root ('' or '/events', '/123/logs', ...).
 * Resolves the parsed body (or `{statusCode, headers, body}` with `fullResponse`).
 */
export async function apiRequest<T = IDataObject>(
	this: LearningPlatformContext,
	method: IHttpRequestMethods,
	root: ApiRoot,
	path: string,
	options: ApiRequestOptions = {},
): Promise<T> {
	const ctx = this as AnyContext;
	const { itemIndex } = options;
	const settings = await connectionFor(ctx, itemIndex);
	const url = `${rootUrl(settings, root)}${path}`;
	const key = rateLimitKey(settings);
	const signal = ctx.getExecutionCancelSignal?.();
	const isCancelled = () => signal?.aborted === true;
	const log = (message: string) => {
		try {
			ctx.logger?.debug(`Learning Platform: ${message}`);
		} catch {
			// logging must never break a request
		}
	};

	const cancelledError = (message: string) =>
		new NodeApiError(ctx.getNode(), { message: 'Cancelled' }, { message, itemIndex });
	const pause = async (ms: number) => {
		await sleep(ms);
		if (isCancelled()) throw cancelledError('The execution was cancelled');
	};

	const checkCancelled = () => {
		if (isCancelled()) throw cancelledError('The execution was cancelled');
	};
	const storedFingerprint = async () =>
		credentialFingerprint(await ctx.getCredentials(CREDENTIAL_TYPE, itemIndex));

	const attempts: Attempts = { transient: 0, rateLimit: 0, exchange: 0, credentialMoves: 0 };
	const fail = async (facts: FailureFacts, overrides: ErrorOverrides = {}) =>
		await apiError(ctx, facts, settings, method, root, path, options, {
			retries: attempts.transient,
			rateLimitRetries: attempts.rateLimit,
			...overrides,
		});

	for (;;) {
		let ticket: RateTicket;
		try {
			ticket = await acquireSlot(key, {
				isCancelled,
				onWait: (ms, reason) => log(`waiting ${ms} ms before ${method} ${root}${path} (${reason})`),
			});
		} catch (error) {
			throw cancelledError((error as Error).message);
		}

		const requestOptions: IHttpRequestOptions = {
			method,
			url,
			headers: { Accept: 'application/json' },
			json: true,
			returnFullResponse: true,
			timeout: REQUEST_TIMEOUT_MS,
		};
		if (options.qs && Object.keys(options.qs).length) requestOptions.qs = options.qs;
		if (options.body !== undefined && !isIdempotent(method)) {
			requestOptions.body = options.body;
			(requestOptions.headers as IDataObject)['Content-Type'] = 'application/json';
		}

		let response: FullResponse;
		try {
			response = (await ctx.helpers.httpRequestWithAuthentication.call(
				ctx as IExecuteFunctions,
				CREDENTIAL_TYPE,
				requestOptions,
			)) as FullResponse;
		} catch (error) {
			const facts = inspectFailure(error);
			if (facts.cancelled || isCancelled()) {
				settleSlot(ticket);
				throw await fail(facts, { message: 'The request was cancelled' });
			}
			// the slot: an exchange failure never reached the API; an answer teaches the limiter
			if (facts.authFailure) releaseSlot(ticket);
			else if (facts.status !== undefined) recordAnswer(ticket, facts);
			else settleSlot(ticket);

			const action = nextAction(facts, method, attempts);
			if (action.kind === 'retry') {
				attempts[action.counter]++;
				log(
					`${action.reason} on ${method} ${root}${path}; retry ${attempts[action.counter]} in ${action.pauseMs} ms`,
				);
				await pause(action.pauseMs);
				continue;
			}
			if (action.kind === 'retryAfterRateLimit') {
				attempts.rateLimit++;
				log(`429 on ${method} ${root}${path}; retrying after the window`);
				continue;
			}
			if (action.kind === 'awaitCredential' && facts.authFailure?.dead) {
				const { kind, dead } = facts.authFailure;
				const outcome = await settleRefusal(
					{ deadToken: dead.token, deadSince: dead.since },
					storedFingerprint,
					clock(),
					checkCancelled,
				);
				if (outcome === 'moved on') {
					attempts.credentialMoves++;
					log(
						`credential ${kind}: the stored credential moved on; repeating the request (${attempts.credentialMoves})`,
					);
					continue;
				}
				log(
					`credential ${kind}: the stored credential kept the dead refresh token for ${REFUSAL_SETTLE_MS / 1000} s`,
				);
			}
			if (facts.authFailure) {
				const { kind } = facts.authFailure;
				const dead = kind === 'refused' || kind === 'stale';
				throw await fail(facts, {
					message: dead ? rejectedMessage(settings) : facts.authFailure.message,
					description: dead ? REJECTED_DESCRIPTION : facts.authFailure.description,
					httpCode: kind === 'unavailable' || kind === 'invalid' ? undefined : '401',
				});
			}
			throw await fail(facts);
		}

		recordAnswer(ticket, { status: response.statusCode, headers: response.headers });

		const body = response.body as IDataObject | undefined;
		if (
			!options.returnFailed &&
			body &&
			typeof body === 'object' &&
			!Array.isArray(body) &&
			body.status === 'Failed'
		) {
			const errors = (body.errors ?? {}) as IDataObject;
			throw await apiError(
				ctx,
				{ message: '', cancelled: false, status: response.statusCode, body },
				settings,
				method,
				root,
				path,
				options,
				{
					message: `The learning platform rejected the request: ${failedStatusMessage(errors)}`,
					description: 'Correct the parameters named above and run the node again.',
					httpCode: '200',
				},
			);
		}

		if (options.fullResponse) {
			return {
				statusCode: response.statusCode,
				headers: response.headers,
				body: response.body,
			} as T;
		}
		return response.body as T;
	}
}

/**
 * All items of a paginated list under the webhook root (webhooks, logs): `page`/`perPage=100`
 * until `meta.last_page` or `limit` items. No hidden page cap.
 */
export async function apiRequestAllPages(
	this: LearningPlatformContext,
	path: string,
	options: Pick<
		ApiRequestOptions,
		'qs' | 'itemIndex' | 'notFoundMessage' | 'notFoundDescription'
	> & { limit?: number } = {},
): Promise<IDataObject[]> {
	const items: IDataObject[] = [];
	const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
	for (let page = 1; ; page++) {
		const response = (await apiRequest.call(this, 'GET', 'webhook', path, {
			qs: { ...(options.qs ?? {}), page, perPage: 100 },
			itemIndex: options.itemIndex,
			notFoundMessage: options.notFoundMessage,
			notFoundDescription: options.notFoundDescription,
		})) as { data?: IDataObject[]; meta?: IDataObject };
		const data = Array.isArray(response?.data) ? response.data : [];
		items.push(...data);
		if (items.length >= limit) return items.slice(0, limit);
		const meta = response?.meta ?? {};
		const lastPage = Number(meta.last_page);
		const currentPage = Number(meta.current_page ?? page);
		if (data.length === 0) break;
		if (Number.isFinite(lastPage)) {
			if (currentPage >= lastPage) break;
		} else if (meta.next === null || meta.next === undefined) {
			// no page count given: stop when the page was not full
			if (data.length < 100) break;
		}
	}
	return items;
}

// ---------------------------------------------------------------------------------------------

/** The HTTP status of a failed call (from the error this module threw), if it got an answer. */
export function statusOf(error: unknown): number | undefined {
	return inspectFailure(error).status;
}

/** Which webhook rejection a 422 from this module was (undefined for any other error). */
export function rejectionOf(error: unknown): Rejection | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	return error.context.rejection as Rejection | undefined;
}

/**
 * Connection settings per node run. n8n's `getCredentials` is a database read and a decryption,
 * and n8n does its own inside `httpRequestWithAuthentication` for every request anyway; base URL,
 * tenancy and username do not change during a run (rotation changes only the tokens, which n8n
 * reads itself). The context object lives for one run, so it is the cache key.
 */
const settingsByRun = new WeakMap<object, ConnectionSettings>();

async function connectionFor(ctx: AnyContext, itemIndex?: number): Promise<ConnectionSettings> {
	const cached = settingsByRun.get(ctx);
	if (cached) return cached;
	const settings = connectionSettings(await loadCredentials(ctx, itemIndex));
	if (!settings.baseUrl || !settings.tenancyId) {
		throw new NodeApiError(
			ctx.getNode(),
			{ message: 'Incomplete credential' },
			{
				message: 'The Learning Platform credential has no Base URL or Tenancy ID',
				description: 'Open the credential and fill in every field.',
				itemIndex,
			},
		);
	}
	settingsByRun.set(ctx, settings);
	return settings;
}

async function loadCredentials(
	ctx: AnyContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	try {
		return await ctx.getCredentials(CREDENTIAL_TYPE, itemIndex);
	} catch (error) {
		throw new NodeApiError(
			ctx.getNode(),
			{ message: 'No credential' },
			{
				message: 'This node needs a Learning Platform API credential',
				description: scrubSecrets((error as Error)?.message ?? ''),
				itemIndex,
			},
		);
	}
}

/** Secrets that may appear in texts about this request: for scrubbing. */
async function knownSecrets(ctx: AnyContext, options: ApiRequestOptions): Promise<string[]> {
	const secrets: string[] = [];
	const push = (v: unknown) => {
		if (typeof v === 'string' && v) secrets.push(v);
	};
	push(options.body?.signing_key);
	push(options.body?.auth_token);
	try {
		// the stored values now (rotation may have changed them since the request began)
		const current = await ctx.getCredentials(CREDENTIAL_TYPE, options.itemIndex);
		push(current.refreshToken);
		push(current.apiKey);
	} catch {
		// pattern-based scrubbing still applies
	}
	return secrets;
}

interface ErrorOverrides {
	message?: string;
	description?: string;
	httpCode?: string;
	retries?: number;
	rateLimitRetries?: number;
}

const WHAT: Record<ApiRoot, string> = {
	report: 'report API',
	bookmark: 'bookmark API',
	webhook: 'webhook API',
};

/** Builds the NodeApiError for a failed call: clear message, scrubbed details, item index. */
async function apiError(
	ctx: AnyContext,
	facts: FailureFacts,
	settings: ConnectionSettings,
	method: IHttpRequestMethods,
	root: ApiRoot,
	path: string,
	options: ApiRequestOptions,
	overrides: ErrorOverrides,
): Promise<NodeApiError> {
	const secrets = await knownSecrets(ctx, options);
	const status = facts.status;
	const server = serverMessage(facts.body);
	const target = `${method} ${WHAT[root]}${path ? ` ${path}` : ''}`;
	let message = overrides.message;
	let description = overrides.description;
	let rejection: Rejection | undefined;

	if (!message) {
		const who = apiUserLabel(settings);
		switch (true) {
			case status === 400:
				message = `The learning platform rejected the request as invalid (400)${server ? `: ${server}` : ''}`;
				description = 'Check the parameters of this operation.';
				break;
			case status === 401:
				message = `The learning platform did not accept the API key for ${who} (401), even after refreshing it`;
				description =
					'If this keeps happening, the API user may have lost access to the tenancy: check it with the platform operator, or paste a new refresh token in the credential.';
				break;
			case status === 403:
				message = `The learning platform refused the request (403 Forbidden) for ${who}`;
				description =
					'Check that this API user is allowed to use this operation. The API also answers 403 when a request has no User-Agent header: check that no proxy between n8n and the platform removes it.';
				break;
			case status === 404 && options.notFoundMessage !== undefined:
				message = `${options.notFoundMessage} (404${server ? `: ${server}` : ''})`;
				description =
					options.notFoundDescription ??
					"Check the values you passed, and the credential's Base URL and Tenancy ID.";
				break;
			case status === 404:
				message = `Not found (404): ${target} does not exist on tenancy '${settings.tenancyId}'`;
				description =
					"Check the ID you passed (it may have been deleted), and the credential's Base URL and Tenancy ID.";
				break;
			case status === 422: {
				const details = validationDetails(facts.body);
				const reason = server ?? details;
				rejection = root === 'webhook' ? classifyRejection(reason ?? '') : undefined;
				message = options.action
					? `Could not ${options.action}: ${reason ?? 'the server rejected the request (HTTP 422)'}`
					: `The learning platform could not process the request (422): ${reason ?? 'validation failed'}`;
				description = rejection
					? REJECTION_ADVICE[rejection]
					: (details && details !== server ? `${details}. ` : '') +
						'The server rejected the values sent: change them accordingly and run the node again.';
				break;
			}
			case status === 429:
				message = `The learning platform kept answering 429 Too Many Requests for ${who}, even after waiting ${overrides.rateLimitRetries ?? 0} times`;
				description =
					'Another integration is probably using the same API user heavily. Give each integration its own API user, or run this workflow later.';
				break;
			case status !== undefined && status >= 500:
				message = `The learning platform failed to process the request (HTTP ${status})`;
				description = isIdempotent(method)
					? `It was retried ${overrides.retries ?? 0} times. Try again later.`
					: `It was not retried because the server may already have processed the ${method}; check the result (for example list the webhooks) before running it again.`;
				if (server) description = `${server}. ${description}`;
				break;
			case status !== undefined:
				message = `The learning platform answered HTTP ${status}${server ? `: ${server}` : ''}`;
				break;
			case facts.code !== undefined || TRANSIENT_NETWORK_MESSAGE.test(facts.message): {
				const code = facts.code ? ` (${facts.code})` : '';
				const repeatable = isRepeatable(method, facts.code);
				message = `Could not reach the learning platform at ${settings.baseUrl}${code}`;
				// In the message itself: with Continue On Fail only the message reaches the output.
				if (!repeatable) {
					message += `. The ${method} may have been processed anyway: check before running it again`;
				}
				description =
					(repeatable
						? `It was retried ${overrides.retries ?? 0} times. `
						: `The ${method} was not retried because the connection failed after it was sent, so the server may have processed it. `) +
					"Check the credential's Base URL and that the server is reachable from n8n.";
				if (facts.message && !facts.code) description = `${facts.message}. ${description}`;
				break;
			}
			default:
				// not an HTTP or network failure (e.g. n8n refused the request before sending it)
				message = `The request to the learning platform failed: ${facts.message || 'unknown error'}`;
		}
	}

	const httpCode = overrides.httpCode ?? (status !== undefined ? String(status) : undefined);
	const safeMessage = scrubSecrets(message, secrets);
	const safeDescription = description ? scrubSecrets(description, secrets) : undefined;
	// What n8n keeps as the error response: the API's answer without secrets, never the raw
	// HTTP error (its request config carries the Authorization header).
	const errorResponse: JsonObject = scrubObject(
		{
			message: safeMessage,
			...(httpCode ? { httpCode } : {}),
			...(facts.body !== undefined && typeof facts.body !== 'function'
				? { response: { body: facts.body as JsonObject } }
				: {}),
		} as JsonObject,
		secrets,
	);
	const error = new NodeApiError(ctx.getNode(), errorResponse, {
		message: safeMessage,
		description: safeDescription,
		httpCode,
		itemIndex: options.itemIndex,
	});
	if (rejection) error.context.rejection = rejection;
	// NodeApiError swaps a message that mentions a Node.js error code (ECONNREFUSED, ...) for a
	// generic sentence; ours already says what happened and what to do
	error.message = safeMessage;
	return error;
}

/** For tests: reset all in-process state (rate-limit buckets and token-exchange memory). */
export { resetRateLimiter } from './rateLimiter';
export { resetTokenExchangeState } from './tokenExchange';
