// The wording of what the user sees when a request fails: HTTP answers, the API's
// `status: "Failed"` bodies, refused refresh tokens. Callers pass facts and their own phrasing
// (what a 404 means, what the call was doing, what a 422 means for it) and their errors leave
// through `apiFailure`/`operationFailure`, scrubbed of secrets. Not here: a node's own outcomes (a
// report not ready, the subscription cap, ...) and the token exchange's own failures stand beside
// their one user; the webhook subscription rules (helpers/subscriptionRules.ts, handed in as
// `readRejection`); parameter checks (the helpers and operations), the router's unknown
// operation, and a cancelled request's message.
import type { IDataObject, IHttpRequestMethods, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { apiUserLabel, type ApiRoot, type ConnectionSettings } from './config';
import type { FailedRequest } from './failureFacts';
import { isIdempotent, isRepeatable, TRANSIENT_NETWORK_MESSAGE } from './retryPolicy';
import { scrubObject, scrubSecrets } from './secrets';

/** A failure in the user's words. */
export interface FailureNotice {
	message: string;
	description?: string;
	/** the HTTP status shown with the error, when there was one */
	httpCode?: string;
	/** for a 422 the caller's `readRejection` recognised: which of its cases it was */
	rejection?: string;
}

// ---- Sentences -----------------------------------------------------------------------------------

/**
 * A text as a sentence that ends in exactly one full stop: the server's own words often end in one
 * already (`The selected username is invalid.`), ours often do not. A text ending in `!`, `?` or
 * `…` (a cut server message) keeps that ending.
 */
export function asSentence(text: string): string {
	const trimmed = text.trim().replace(/\.+$/, '');
	if (!trimmed) return '';
	return /[!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** Sentences joined by one space, each ending in exactly one full stop; empty parts are left out. */
export function sentences(...parts: Array<string | undefined>): string {
	return parts
		.map((part) => (part === undefined ? '' : asSentence(part)))
		.filter((part) => part !== '')
		.join(' ');
}

// ---- Reading the API's answers ------------------------------------------------------------------

/**
 * An HTTP-200 `status: "Failed"` body's `errors`, e.g.
 * `updatedSince: The updated since must be in the format Y-m-d\TH:i:s\Z.; limit: ...`; the
 * reports' generic `exception` key is shown as the bare message.
 */
export function failedStatusMessage(errors: IDataObject | undefined): string {
	if (!errors || typeof errors !== 'object') return 'The API reported a failure without details';
	const parts: string[] = [];
	for (const [field, value] of Object.entries(errors)) {
		let messages: string[];
		if (Array.isArray(value))
			messages = value.map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
		else if (value && typeof value === 'object') messages = [JSON.stringify(value)];
		else messages = [String(value)];
		const text = messages.join(' ').trim();
		parts.push(field === 'exception' ? text : `${field}: ${text}`);
	}
	return parts.length ? parts.join('; ') : 'The API reported a failure without details';
}

/** The server's own message from an error body (JSON `message`/`error`, or a short text body). */
export function serverMessage(body: unknown): string | undefined {
	if (typeof body === 'string') {
		const text = body.trim();
		if (!text) return undefined;
		try {
			return serverMessage(JSON.parse(text));
		} catch {
			return text.length > 300 ? `${text.slice(0, 300)}…` : text;
		}
	}
	if (body && typeof body === 'object') {
		const b = body as IDataObject;
		if (typeof b.message === 'string' && b.message) return b.message;
		if (typeof b.error === 'string' && b.error) return b.error;
		const inner = b.error as IDataObject | undefined;
		if (inner && typeof inner === 'object' && typeof inner.message === 'string') {
			return inner.message;
		}
	}
	return undefined;
}

/** Validation details of a Laravel-style 422 body (`errors: {field: [messages]}`), if any. */
export function validationDetails(body: unknown): string | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const errors = (body as IDataObject).errors;
	if (!errors || typeof errors !== 'object' || Array.isArray(errors)) return undefined;
	return failedStatusMessage(errors as IDataObject);
}

// ---- A failed request -----------------------------------------------------------------------------

/** What the caller of a request says about it, for its failure's wording. */
export interface CallerPhrasing {
	/** what a 404 means for this call, e.g. `No learner "jane" or no course with ID 87` */
	notFoundMessage?: string;
	/** what to check after such a 404 */
	notFoundDescription?: string;
	/** what the call does, e.g. `create the webhook subscription`: a 422 reads "Could not ..." */
	action?: string;
	/** what a 422 means for this call, read from the server's reason; undefined: the generic advice */
	readRejection?: (reason: string) => RejectionReading | undefined;
}

/** A caller's reading of a 422: which of its cases the server's words name, and what to do. */
export interface RejectionReading {
	/** kept on the error for callers that branch on it (`rejectionOf`) */
	kind: string;
	/** the error's description */
	advice: string;
}

/** The call itself: to whom, what, and how often it was repeated. */
export interface CallFacts {
	settings: ConnectionSettings;
	method: IHttpRequestMethods;
	root: ApiRoot;
	path: string;
	retries: number;
	rateLimitRetries: number;
}

const API_NAME: Record<ApiRoot, string> = {
	report: 'report API',
	bookmark: 'bookmark API',
	webhook: 'webhook API',
};

/** The notice of a request that got an HTTP error, no answer, or an unusable one. */
export function requestFailure(
	facts: FailedRequest,
	call: CallFacts,
	phrasing: CallerPhrasing,
): FailureNotice {
	const { status } = facts;
	const httpCode = status !== undefined ? String(status) : undefined;
	const server = serverMessage(facts.body);
	const who = apiUserLabel(call.settings);
	const withServer = server ? `: ${server}` : '';

	switch (true) {
		case status === 400:
			return {
				message: `The learning platform rejected the request as invalid (400)${withServer}`,
				description: 'Check the parameters of this operation.',
				httpCode,
			};
		case status === 401:
			return {
				message: `The learning platform did not accept the API key for ${who} (401), even after refreshing it`,
				description:
					'If this keeps happening, the API user may have lost access to the tenancy: check it with the platform operator, or paste a new refresh token in the credential.',
				httpCode,
			};
		case status === 403:
			return {
				message: `The learning platform refused the request (403 Forbidden) for ${who}`,
				description:
					'Check that this API user is allowed to use this operation. The API also answers 403 when a request has no User-Agent header: check that no proxy between n8n and the platform removes it.',
				httpCode,
			};
		case status === 404:
			return notFound(call, phrasing, withServer, httpCode);
		case status === 422:
			return unprocessable(facts.body, server, phrasing, httpCode);
		case status === 429:
			return {
				message: `The learning platform kept answering 429 Too Many Requests for ${who}, even after waiting ${call.rateLimitRetries} times`,
				description:
					'Another integration is probably using the same API user heavily. Give each integration its own API user, or run this workflow later.',
				httpCode,
			};
		case status !== undefined && status >= 500:
			return serverFailed(status, server, call, httpCode);
		case status !== undefined:
			return { message: `The learning platform answered HTTP ${status}${withServer}`, httpCode };
		case facts.code !== undefined || TRANSIENT_NETWORK_MESSAGE.test(facts.message):
			return unreachable(facts, call);
		default:
			// not an HTTP or network failure (e.g. n8n refused the request before sending it)
			return {
				message: `The request to the learning platform failed: ${facts.message || 'unknown error'}`,
			};
	}
}

function notFound(
	call: CallFacts,
	phrasing: CallerPhrasing,
	withServer: string,
	httpCode: string | undefined,
): FailureNotice {
	if (phrasing.notFoundMessage !== undefined) {
		return {
			message: `${phrasing.notFoundMessage} (404${withServer})`,
			description:
				phrasing.notFoundDescription ??
				"Check the values you passed, and the credential's Base URL and Tenancy ID.",
			httpCode,
		};
	}
	const target = `${call.method} ${API_NAME[call.root]}${call.path ? ` ${call.path}` : ''}`;
	return {
		message: `Not found (404): ${target} does not exist on tenancy '${call.settings.tenancyId}'`,
		description:
			"Check the ID you passed (it may have been deleted), and the credential's Base URL and Tenancy ID.",
		httpCode,
	};
}

function serverFailed(
	status: number,
	server: string | undefined,
	call: CallFacts,
	httpCode: string | undefined,
): FailureNotice {
	const retried = isIdempotent(call.method)
		? `It was retried ${call.retries} times. Try again later.`
		: `It was not retried because the server may already have processed the ${call.method}; check the result (for example list the webhooks) before running it again.`;
	return {
		message: `The learning platform failed to process the request (HTTP ${status})`,
		description: sentences(server, retried),
		httpCode,
	};
}

function unprocessable(
	body: unknown,
	server: string | undefined,
	phrasing: CallerPhrasing,
	httpCode: string | undefined,
): FailureNotice {
	const details = validationDetails(body);
	const reason = server ?? details;
	const reading = reason !== undefined ? phrasing.readRejection?.(reason) : undefined;
	return {
		message: phrasing.action
			? `Could not ${phrasing.action}: ${reason ?? 'the server rejected the request (HTTP 422)'}`
			: `The learning platform could not process the request (422): ${reason ?? 'validation failed'}`,
		description: reading
			? reading.advice
			: sentences(
					details !== server ? details : undefined,
					'The server rejected the values sent: change them accordingly and run the node again.',
				),
		httpCode,
		rejection: reading?.kind,
	};
}

function unreachable(facts: FailedRequest, call: CallFacts): FailureNotice {
	const code = facts.code ? ` (${facts.code})` : '';
	const repeatable = isRepeatable(call.method, facts.code);
	// in the message itself: with Continue On Fail only the message reaches the output
	const maybeProcessed = repeatable
		? ''
		: `. The ${call.method} may have been processed anyway: check before running it again`;
	const retried = repeatable
		? `It was retried ${call.retries} times`
		: `The ${call.method} was not retried because the connection failed after it was sent, so the server may have processed it`;
	const cause = facts.message && !facts.code ? facts.message : undefined;
	return {
		message: `Could not reach the learning platform at ${call.settings.baseUrl}${code}${maybeProcessed}`,
		description: sentences(
			cause,
			retried,
			"Check the credential's Base URL and that the server is reachable from n8n",
		),
	};
}

/** An answer of HTTP 200 whose body says `status: "Failed"`. */
export function failedStatus(errors: IDataObject | undefined): FailureNotice {
	return {
		message: `The learning platform rejected the request: ${failedStatusMessage(errors)}`,
		description: 'Correct the parameters named above and run the node again.',
		httpCode: '200',
	};
}

export const cancelled: FailureNotice = { message: 'The execution was cancelled' };

export function noCredential(reason: string): FailureNotice {
	return { message: 'This node needs a Learning Platform API credential', description: reason };
}

export const incompleteConnection: FailureNotice = {
	message: 'The Learning Platform credential has no Base URL or Tenancy ID',
	description: 'Open the credential and fill in every field.',
};

// ---- A refused refresh token (request.ts and the exchange) ------------------------------------

export function refreshTokenRejected(settings: ConnectionSettings): FailureNotice {
	return {
		message: `The refresh token for ${apiUserLabel(settings)} was rejected by the learning platform (401). Paste a new refresh token in the credential.`,
		description:
			'The refresh token is single-use: each exchange replaces it. It is refused when it was already used (for example by another n8n instance or another tool sharing this API user), revoked, or issued for a different API username or tenancy. Nothing stored in the credential was changed. Ask the platform operator for a new refresh token if you no longer have a valid one, and give each integration its own API user.',
		httpCode: '401',
	};
}

// ---- Errors as n8n shows them ---------------------------------------------------------------------

interface FailureContext {
	itemIndex?: number;
	/** the API's answer, kept (scrubbed) as the error's response */
	body?: unknown;
	/** exact secret values to remove from every text */
	secrets?: string[];
}

/** A `NodeApiError`: the failure of a call to the platform. */
export function apiFailure(
	node: INode,
	notice: FailureNotice,
	{ itemIndex, body, secrets = [] }: FailureContext = {},
): NodeApiError {
	const message = scrubSecrets(notice.message, secrets);
	const description = notice.description ? scrubSecrets(notice.description, secrets) : undefined;
	// what n8n keeps as the error response: the answer without secrets, never the raw HTTP error
	// (its request config carries the Authorization header)
	const response = scrubObject(
		{
			message,
			...(notice.httpCode ? { httpCode: notice.httpCode } : {}),
			...(body !== undefined && typeof body !== 'function'
				? { response: { body: body as JsonObject } }
				: {}),
		} as JsonObject,
		secrets,
	);
	const error = new NodeApiError(node, response, {
		message,
		description,
		httpCode: notice.httpCode,
		itemIndex,
	});
	if (notice.rejection) error.context.rejection = notice.rejection;
	// NodeApiError swaps a message naming a Node.js error code (ECONNREFUSED...) for a generic one
	error.message = message;
	return error;
}

/** A `NodeOperationError`: the platform answered, but the operation could not do its work. */
export function operationFailure(
	node: INode,
	notice: FailureNotice,
	itemIndex?: number,
): NodeOperationError {
	return new NodeOperationError(node, scrubSecrets(notice.message), {
		itemIndex,
		description: notice.description ? scrubSecrets(notice.description) : undefined,
	});
}

/** Which case of its caller's `readRejection` a 422 error was (undefined for any other error). */
export function rejectionOf(error: unknown): string | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	const kind = error.context.rejection;
	return typeof kind === 'string' ? kind : undefined;
}
