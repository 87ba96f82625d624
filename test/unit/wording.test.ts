/**
 * Error texts reach people and AI models as they are: exactly one full stop between sentences,
 * whether the server's own words end in one or not.
 */
import type { FailedRequest } from '../../nodes/shared/transport/failureFacts';
import {
	asSentence,
	requestFailure,
	sentences,
	type CallFacts,
} from '../../nodes/shared/transport/wording';

const call = (method: CallFacts['method'], root: CallFacts['root'] = 'bookmark'): CallFacts => ({
	settings: { baseUrl: 'https://lms.example', tenancyId: 't', username: 'u' },
	method,
	root,
	path: '',
	retries: 3,
	rateLimitRetries: 0,
});
const facts = (over: Partial<FailedRequest>): FailedRequest => ({
	message: '',
	cancelled: false,
	...over,
});

/** Every place in a text where sentences meet with something other than one full stop. */
const slips = (text: string | undefined) =>
	(text ?? '').match(/\.\s*\.|[^.!?…]\s+[A-Z][a-z]+ the /g);

test('asSentence and sentences: one full stop, whatever the part ended with', () => {
	expect(asSentence('The selected username is invalid.')).toBe('The selected username is invalid.');
	expect(asSentence('The selected username is invalid..')).toBe(
		'The selected username is invalid.',
	);
	expect(asSentence('  no full stop  ')).toBe('no full stop.');
	expect(asSentence('Really?')).toBe('Really?');
	expect(asSentence('a cut server message…')).toBe('a cut server message…');
	expect(asSentence('')).toBe('');
	expect(sentences('One.', undefined, 'Two', '', 'Three.')).toBe('One. Two. Three.');
});

test('a 422 whose field message ends in a full stop: one full stop before the advice', () => {
	const notice = requestFailure(
		facts({
			status: 422,
			body: {
				success: false,
				message: 'The given data was invalid.',
				errors: { username: ['The selected username is invalid.'] },
			},
		}),
		call('POST'),
		{},
	);
	expect(notice.message).toBe(
		'The learning platform could not process the request (422): The given data was invalid.',
	);
	expect(notice.description).toBe(
		'username: The selected username is invalid. The server rejected the values sent: change them accordingly and run the node again.',
	);
	expect(notice.description).not.toContain('..');
});

test("a 5xx with the server's words, and a failed connection: one full stop between sentences", () => {
	const failed = requestFailure(
		facts({ status: 503, body: { message: 'Service unavailable.' } }),
		call('GET'),
		{},
	);
	expect(failed.description).toBe('Service unavailable. It was retried 3 times. Try again later.');

	const unreachable = requestFailure(facts({ message: 'socket hang up.' }), call('POST'), {});
	expect(unreachable.description).toBe(
		"socket hang up. The POST was not retried because the connection failed after it was sent, so the server may have processed it. Check the credential's Base URL and that the server is reachable from n8n.",
	);
	for (const text of [failed.description, unreachable.description]) expect(slips(text)).toBeNull();
});
