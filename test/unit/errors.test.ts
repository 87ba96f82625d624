/**
 * How the transport reads a failed request: the credential exchange's failure must be recognised
 * however n8n passed it on. n8n 2.x keeps the thrown error as `cause`; n8n 1.x wraps it in a
 * NodeApiError that keeps only the message and description.
 */
import { authFailure, inspectFailure } from '../../nodes/LearningPlatform/transport/failureFacts';

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
