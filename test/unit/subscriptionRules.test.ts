/**
 * The platform's webhook subscription rules (nodes/shared/helpers/subscriptionRules.ts), and the
 * transport's 422 wording taking their reading from its caller (`readRejection`).
 */
import { NodeApiError } from 'n8n-workflow';

import {
	isHttpsUrl,
	readSubscriptionRejection,
	subscriptionRejectionOf,
	SUBSCRIPTION_CAP,
} from '../../nodes/shared/helpers/subscriptionRules';
import type { FailedRequest } from '../../nodes/shared/transport/failureFacts';
import { apiFailure, requestFailure, type CallFacts } from '../../nodes/shared/transport/wording';

const create: CallFacts = {
	settings: { baseUrl: 'https://lms.example', tenancyId: 't', username: 'u' },
	method: 'POST',
	root: 'webhook',
	path: '',
	retries: 0,
	rateLimitRetries: 0,
};

const unprocessable = (field: string, message: string): FailedRequest => ({
	message: '',
	cancelled: false,
	status: 422,
	body: { message, errors: { [field]: [message] } },
});

const atCap = unprocessable('subscription', 'Maximum of 100 subscriptions per API key reached.');
const duplicate = unprocessable('url', 'A subscription for this event and URL already exists.');
const wildcard = unprocessable('event', 'Wildcard events are not allowed for relay.');

test('isHttpsUrl: only an absolute https:// URL', () => {
	expect(isHttpsUrl('https://n8n.example.com/webhook/abc/webhook')).toBe(true);
	expect(isHttpsUrl('HTTPS://n8n.example.com/')).toBe(true);
	expect(isHttpsUrl('http://localhost:5678/webhook')).toBe(false);
	expect(isHttpsUrl('n8n.example.com/webhook')).toBe(false);
	expect(isHttpsUrl('https://')).toBe(false);
	expect(isHttpsUrl('')).toBe(false);
	expect(SUBSCRIPTION_CAP).toBe(100);
});

test('the three documented 422s are told apart by the server words; any other is not', () => {
	const reason = (f: FailedRequest) => (f.body as { message: string }).message;
	expect(readSubscriptionRejection(reason(atCap))?.kind).toBe('capReached');
	expect(readSubscriptionRejection(reason(duplicate))?.kind).toBe('duplicate');
	expect(readSubscriptionRejection(reason(wildcard))?.kind).toBe('wildcard');
	expect(readSubscriptionRejection('The selected event is invalid.')).toBeUndefined();
});

test('a caller that hands over the rules gets their advice and kind on the error', () => {
	const notice = requestFailure(atCap, create, {
		action: 'create the webhook subscription',
		readRejection: readSubscriptionRejection,
	});
	expect(notice.description).toBe(
		'This API user already has 100 webhook subscriptions, the most allowed. Delete unused ones (Operation "Delete") and try again.',
	);
	const error = apiFailure({ name: 'n', type: 't' } as never, notice);
	expect(error).toBeInstanceOf(NodeApiError);
	expect(subscriptionRejectionOf(error)).toBe('capReached');
	expect(subscriptionRejectionOf(new Error('other'))).toBeUndefined();
});

test('a caller that passes nothing keeps the transport generic 422 wording, on the webhook root too', () => {
	const notice = requestFailure(duplicate, create, {});
	expect(notice.message).toBe(
		'The learning platform could not process the request (422): A subscription for this event and URL already exists.',
	);
	expect(notice.description).toBe(
		'url: A subscription for this event and URL already exists. The server rejected the values sent: change them accordingly and run the node again.',
	);
	expect(notice.rejection).toBeUndefined();
	expect(subscriptionRejectionOf(apiFailure({ name: 'n', type: 't' } as never, notice))).toBe(
		undefined,
	);
});
