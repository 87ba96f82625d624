import { createHmac, timingSafeEqual } from 'node:crypto';

// Verification of one delivery: the bearer token AND the HMAC-SHA256 signature of the exact bytes
// received, hex or base64, with or without `sha256=` (the spec leaves the encoding open). Pure, so
// it is tested alone with real Buffers.

export interface DeliverySecrets {
	signingKey: string;
	authToken: string;
}

export interface DeliveryToVerify {
	/** the bytes as received (n8n's `req.rawBody`); never a re-serialised object */
	rawBody: Buffer | undefined;
	/** value of the `Authorization` header as the request object gives it (string, array or absent) */
	authorization: unknown;
	/** value of the `X-Signature` header as the request object gives it */
	signature: unknown;
}

export type VerificationFailure =
	| 'no-secrets'
	| 'no-body'
	| 'missing-token'
	| 'wrong-token'
	| 'missing-signature'
	| 'malformed-signature'
	| 'wrong-signature';

export type VerificationResult = { valid: true } | { valid: false; reason: VerificationFailure };

const DIGEST_BYTES = 32;
const HEX_DIGEST = /^[0-9a-f]{64}$/i;
// 32 bytes in standard base64: 43 significant characters, the last one carrying 4 bits, and one `=`
const BASE64_DIGEST = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$/;
const SIGNATURE_PREFIX = /^sha256=/i;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Decodes an `X-Signature` value into the 32 digest bytes, or null when it is not one of the accepted forms. */
export function decodeSignature(headerValue: string): Buffer | null {
	const value = headerValue.trim().replace(SIGNATURE_PREFIX, '');
	if (HEX_DIGEST.test(value)) return Buffer.from(value, 'hex');
	if (BASE64_DIGEST.test(value)) {
		const decoded = Buffer.from(value, 'base64');
		return decoded.length === DIGEST_BYTES ? decoded : null;
	}
	return null;
}

/** HMAC-SHA256 of `body` under `signingKey` (the key string's UTF-8 bytes, as sent to the API). */
export function computeSignature(signingKey: string, body: Buffer): Buffer {
	return createHmac('sha256', signingKey).update(body).digest();
}

/** Constant-time equality of two strings; the length check only reveals the length. */
function constantTimeEqualStrings(a: string, b: string): boolean {
	const left = Buffer.from(a, 'utf8');
	const right = Buffer.from(b, 'utf8');
	if (left.length !== right.length) return false;
	return timingSafeEqual(left, right);
}

function headerText(value: unknown): string | undefined {
	if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
	return typeof value === 'string' ? value : undefined;
}

/**
 * Checks a delivery against the secrets stored when the subscription was created.
 * Both checks must pass; missing secrets fail closed.
 */
export function verifyDelivery(
	delivery: DeliveryToVerify,
	secrets: Partial<DeliverySecrets> | undefined,
): VerificationResult {
	const signingKey = secrets?.signingKey;
	const authToken = secrets?.authToken;
	if (
		typeof signingKey !== 'string' ||
		signingKey === '' ||
		typeof authToken !== 'string' ||
		authToken === ''
	) {
		return { valid: false, reason: 'no-secrets' };
	}
	if (!Buffer.isBuffer(delivery.rawBody)) return { valid: false, reason: 'no-body' };

	const authorization = headerText(delivery.authorization);
	if (authorization === undefined || authorization.trim() === '')
		return { valid: false, reason: 'missing-token' };
	const presentedToken = BEARER.exec(authorization.trim())?.[1];
	if (presentedToken === undefined || !constantTimeEqualStrings(presentedToken, authToken)) {
		return { valid: false, reason: 'wrong-token' };
	}

	return verifySignature(delivery.rawBody, delivery.signature, signingKey);
}

/** The `X-Signature` check alone: the HMAC of `rawBody` under `signingKey`. */
export function verifySignature(
	rawBody: Buffer,
	signatureHeader: unknown,
	signingKey: string,
): VerificationResult {
	const signature = headerText(signatureHeader);
	if (signature === undefined || signature.trim() === '')
		return { valid: false, reason: 'missing-signature' };
	const presentedDigest = decodeSignature(signature);
	if (presentedDigest === null) return { valid: false, reason: 'malformed-signature' };
	const expectedDigest = computeSignature(signingKey, rawBody);
	// both are exactly 32 bytes here; the check keeps timingSafeEqual from throwing if that ever changes
	if (
		presentedDigest.length !== expectedDigest.length ||
		!timingSafeEqual(presentedDigest, expectedDigest)
	) {
		return { valid: false, reason: 'wrong-signature' };
	}
	return { valid: true };
}
