/**
 * The delivery check alone, with real Buffers: the bearer token AND the HMAC-SHA256 of the raw
 * bytes, in every accepted encoding, and every way a delivery can fail.
 */
import { createHmac } from 'node:crypto';

import {
	decodeSignature,
	verifyDelivery,
} from '../../nodes/LearningPlatformTrigger/deliveries/signature';

const secrets = { signingKey: 'a'.repeat(40) + 'signing', authToken: 't'.repeat(40) + 'token' };
const body = Buffer.from(
	'{"event":"Events\\\\Courses\\\\Completion_created","payload":{"completion":{"id":7,"time_completed":"2024-05-01T09:00:00+00:00"}},"now":1714554000,"delivery_id":"","api_version":"2.0"}',
	'utf8',
);
const digest = (key: string, bytes: Buffer) => createHmac('sha256', key).update(bytes).digest();
const bearer = `Bearer ${secrets.authToken}`;

// explicit arguments, so `undefined` means "absent" (a default parameter would replace it)
function check(
	signature: unknown,
	...rest: [authorization?: unknown, rawBody?: Buffer | undefined]
) {
	const authorization = rest.length >= 1 ? rest[0] : bearer;
	const rawBody = rest.length >= 2 ? rest[1] : body;
	return verifyDelivery({ rawBody, authorization, signature }, secrets);
}

describe('verifyDelivery', () => {
	const valid = digest(secrets.signingKey, body);

	test.each([
		['lowercase hex', valid.toString('hex')],
		['uppercase hex', valid.toString('hex').toUpperCase()],
		['sha256= hex', `sha256=${valid.toString('hex')}`],
		['base64', valid.toString('base64')],
		['base64 without padding', valid.toString('base64').replace(/=+$/, '')],
		['sha256= base64', `sha256=${valid.toString('base64')}`],
		['SHA256= prefix, surrounding spaces', `  SHA256=${valid.toString('hex')} `],
	])('accepts a valid signature as %s', (_name, signature) => {
		expect(check(signature)).toEqual({ valid: true });
	});

	test('accepts the header as an array (first value), and a case-insensitive Bearer scheme', () => {
		expect(check([valid.toString('hex')], [`bearer ${secrets.authToken}`])).toEqual({
			valid: true,
		});
	});

	test('rejects a tampered body (one byte changed)', () => {
		const tampered = Buffer.from(body);
		tampered[tampered.length - 3] ^= 0x01;
		expect(check(valid.toString('hex'), bearer, tampered)).toEqual({
			valid: false,
			reason: 'wrong-signature',
		});
	});

	test('rejects a re-serialised body (same JSON, other bytes)', () => {
		const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')), null, 1));
		expect(check(valid.toString('hex'), bearer, reserialised)).toEqual({
			valid: false,
			reason: 'wrong-signature',
		});
	});

	test('rejects a signature made with another key', () => {
		const other = digest('another-key', body);
		expect(check(other.toString('hex'))).toEqual({ valid: false, reason: 'wrong-signature' });
		expect(check(other.toString('base64'))).toEqual({ valid: false, reason: 'wrong-signature' });
	});

	test('rejects a missing or empty signature header', () => {
		expect(check(undefined)).toEqual({ valid: false, reason: 'missing-signature' });
		expect(check('  ')).toEqual({ valid: false, reason: 'missing-signature' });
	});

	test.each([
		['a truncated hex digest', valid.toString('hex').slice(0, 63)],
		['a hex digest with one extra digit', `${valid.toString('hex')}0`],
		['a sha1-length digest', valid.subarray(0, 20).toString('hex')],
		['another prefix', `sha1=${valid.toString('hex')}`],
		['the key itself', secrets.signingKey],
	])('rejects %s as malformed', (_name, signature) => {
		expect(check(signature)).toEqual({ valid: false, reason: 'malformed-signature' });
	});

	test('rejects base64url (not one of the accepted encodings)', () => {
		// find a body whose digest's base64 holds + or /, which base64url writes as - or _
		let index = 0;
		let bytes = digest(secrets.signingKey, Buffer.from(`${index}`));
		while (!/[+/]/.test(bytes.toString('base64')))
			bytes = digest(secrets.signingKey, Buffer.from(`${++index}`));
		const signed = Buffer.from(`${index}`);
		expect(check(bytes.toString('base64'), bearer, signed)).toEqual({ valid: true });
		expect(check(bytes.toString('base64url'), bearer, signed)).toEqual({
			valid: false,
			reason: 'malformed-signature',
		});
	});

	test('rejects a wrong, missing or malformed bearer token even with a valid signature', () => {
		const signature = valid.toString('hex');
		expect(check(signature, `Bearer ${secrets.authToken}x`)).toEqual({
			valid: false,
			reason: 'wrong-token',
		});
		expect(check(signature, `Bearer ${secrets.authToken.slice(0, -1)}`)).toEqual({
			valid: false,
			reason: 'wrong-token',
		});
		expect(check(signature, secrets.authToken)).toEqual({ valid: false, reason: 'wrong-token' });
		expect(check(signature, `Basic ${secrets.authToken}`)).toEqual({
			valid: false,
			reason: 'wrong-token',
		});
		expect(check(signature, undefined)).toEqual({ valid: false, reason: 'missing-token' });
	});

	test('fails closed without stored secrets or without a raw body', () => {
		const signature = valid.toString('hex');
		expect(verifyDelivery({ rawBody: body, authorization: bearer, signature }, undefined)).toEqual({
			valid: false,
			reason: 'no-secrets',
		});
		expect(
			verifyDelivery(
				{ rawBody: body, authorization: bearer, signature },
				{ authToken: secrets.authToken },
			),
		).toEqual({
			valid: false,
			reason: 'no-secrets',
		});
		expect(
			verifyDelivery(
				{ rawBody: body, authorization: bearer, signature },
				{ signingKey: '', authToken: secrets.authToken },
			),
		).toEqual({ valid: false, reason: 'no-secrets' });
		expect(check(signature, bearer, undefined)).toEqual({ valid: false, reason: 'no-body' });
	});
});

describe('decodeSignature', () => {
	test('hex and base64 of the same digest decode to the same 32 bytes', () => {
		const bytes = digest('k', body);
		expect(decodeSignature(bytes.toString('hex'))).toEqual(bytes);
		expect(decodeSignature(bytes.toString('base64'))).toEqual(bytes);
		expect(decodeSignature(`sha256=${bytes.toString('base64')}`)).toEqual(bytes);
	});
});
