import type { IDataObject } from 'n8n-workflow';

/**
 * The spec's masking of subscription secrets, shared by the webhook operations (which mask what
 * they read) and the webhook trigger (which compares a masked secret with the one it holds).
 */

export const MASK_PREFIX = '\u2022'.repeat(8);
export const MASK_VISIBLE_CHARACTERS = 4;
export const SECRET_FIELDS = ['signing_key', 'auth_token'] as const;

/** The spec's masking: eight bullets then the last four characters. */
export function maskSecret<T>(value: T): T | string {
	if (typeof value !== 'string' || value === '' || value.startsWith(MASK_PREFIX)) return value;
	return `${MASK_PREFIX}${value.slice(-MASK_VISIBLE_CHARACTERS)}`;
}

/**
 * Reads must never show a secret, even if a server answered unmasked: only create and
 * update (where the user set the secret) may output them as the server returned them.
 */
export function maskSubscription(subscription: IDataObject): IDataObject {
	const masked = { ...subscription };
	for (const field of SECRET_FIELDS)
		if (field in masked) masked[field] = maskSecret(masked[field]) as IDataObject[string];
	return masked;
}
