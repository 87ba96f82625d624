/**
 * How the transport reads a failed request: the credential exchange's failure must be recognised
 * however n8n passed it on. n8n 2.x keeps the thrown error as `cause`; n8n 1.x wraps it in a
 * NodeApiError that keeps only the message and description.
 */
import { NodeApiError, type JsonObject } from 'n8n-workflow';

import { authFailure, inspectFailure } from '../../nodes/shared/transport/failureFacts';
import { readSubscriptionRejection } from '../../nodes/shared/helpers/subscriptionRules';
import { requestFailure } from '../../nodes/shared/transport/wording';

test('the exchange failure is recognised with its marker (n8n 2.x keeps the error as cause)', () => {
	const thrown = authFailure({
		kind: 'refused',
		message: 'The refresh token for user A was rejected (401)',
		description: 'advice',
		dead: { token: 'fp-a', since: 1_000 },
	});
	const wrapped = Object.assign(new Error(thrown.message), { cause: thrown });
	expect(inspectFailure(wrapped).authFailure).toEqual({
		kind: 'refused',
		message: 'The refresh token for user A was rejected (401)',
		description: 'advice',
		dead: { token: 'fp-a', since: 1_000 },
	});
});

test('and without it, from the message alone (n8n 1.x keeps only message and description)', () => {
	authFailure({
		kind: 'stale',
		message: 'The refresh token for user B was already used',
		dead: { token: 'fp-b', since: 2_000 },
	});
	const strippedByN8n1 = new Error('The refresh token for user B was already used');
	expect(inspectFailure(strippedByN8n1).authFailure).toEqual(
		expect.objectContaining({ kind: 'stale', dead: { token: 'fp-b', since: 2_000 } }),
	);
	// an unrelated failure stays what it is
	expect(inspectFailure(new Error('socket hang up')).authFailure).toBeUndefined();
});

describe('an HTTP error as each n8n line passes it on', () => {
	const node = {
		id: '1',
		name: 'Learning Platform',
		type: 'n8n-nodes-learning-platform.learningPlatform',
		typeVersion: 1,
		position: [0, 0] as [number, number],
		parameters: {},
	};
	const body = { message: 'Maximum of 100 subscriptions per API key reached.' };
	const axiosLike = () =>
		Object.assign(new Error('Request failed with status code 422'), {
			name: 'AxiosError',
			response: { status: 422, headers: { 'retry-after': '3' }, data: body },
		});

	test('n8n 2.x: the HTTP error is the cause, with its status, headers and body', () => {
		const facts = inspectFailure(new NodeApiError(node, axiosLike() as unknown as JsonObject));
		expect(facts).toEqual(
			expect.objectContaining({ status: 422, body, headers: { 'retry-after': '3' } }),
		);
	});

	test('n8n 1.x: no cause; the status and the JSON body still reach the wording', () => {
		const error = new NodeApiError(node, axiosLike() as unknown as JsonObject);
		// n8n-workflow 1.x's class field `cause;` resets the cause the Error constructor set
		Object.defineProperty(error, 'cause', { value: undefined });
		const facts = inspectFailure(error);
		expect(facts.status).toBe(422);
		expect(facts.body).toEqual(body);
		const notice = requestFailure(
			facts,
			{
				settings: { baseUrl: 'https://lms.example', tenancyId: 't', username: 'u' },
				method: 'POST',
				root: 'webhook',
				path: '',
				retries: 0,
				rateLimitRetries: 0,
			},
			{ action: 'create the webhook subscription', readRejection: readSubscriptionRejection },
		);
		expect(notice.message).toBe(
			'Could not create the webhook subscription: Maximum of 100 subscriptions per API key reached.',
		);
		expect(notice.rejection).toBe('capReached');
	});
});
