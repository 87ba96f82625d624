// The subscription as the trigger keeps it in its node's static data (staticData.ts declares the
// fields), and the secrets it registers with: derived from a seed the node keeps for good.
import { createHmac, randomBytes } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';

import { MASK_VISIBLE_CHARACTERS } from '../../shared/helpers';
import { clearField, readField, writeField, type StaticDataField } from '../staticData';

/** What the trigger keeps in `getWorkflowStaticData('node')` while a subscription is registered. */
export interface StoredSubscription {
	subscriptionId: number;
	signingKey: string;
	authToken: string;
	event: string;
	url: string;
	/** registered for "Listen for test event": always deleted, never kept */
	test?: boolean;
}

const SECRET_BYTES = 32;

const STORED_KEYS: Array<keyof StoredSubscription> = [
	'subscriptionId',
	'signingKey',
	'authToken',
	'event',
	'url',
	'test',
];

export function readStoredSubscription(staticData: IDataObject): Partial<StoredSubscription> {
	const text = (field: StaticDataField) => {
		const value = readField(staticData, field);
		return typeof value === 'string' ? value : undefined;
	};
	const id = readField(staticData, 'subscriptionId');
	return {
		subscriptionId: typeof id === 'number' ? id : undefined,
		signingKey: text('signingKey'),
		authToken: text('authToken'),
		event: text('event'),
		url: text('url'),
		test: readField(staticData, 'test') === true ? true : undefined,
	};
}

export function clearStoredSubscription(staticData: IDataObject): void {
	for (const key of STORED_KEYS) clearField(staticData, key);
}

export function storeSubscription(staticData: IDataObject, subscription: StoredSubscription): void {
	for (const key of STORED_KEYS) {
		const value = subscription[key];
		if (value === undefined) clearField(staticData, key);
		else writeField(staticData, key, value);
	}
}

/**
 * The signing key and bearer token, made from a seed the node keeps for good: every subscription
 * of this node gets the same secrets, so a delivery's save of static data loaded before a
 * re-activation (n8n saves the whole field, last writer wins) cannot bring back secrets the
 * platform no longer uses. docs/design.md, "Exactly once".
 */
export function subscriptionSecrets(staticData: IDataObject): {
	signingKey: string;
	authToken: string;
} {
	const stored = readField(staticData, 'secretSeed');
	let seed = typeof stored === 'string' ? stored : '';
	if (seed.length < 2 * SECRET_BYTES) {
		seed = randomBytes(SECRET_BYTES).toString('hex');
		writeField(staticData, 'secretSeed', seed);
	}
	const derive = (purpose: string) => createHmac('sha256', seed).update(purpose).digest('hex');
	return { signingKey: derive('signing key'), authToken: derive('auth token') };
}

/** A masked secret (`••••••••abcd`) or an unmasked one, compared with the secret we hold by its visible tail. */
export function secretMatches(shown: unknown, held: string | undefined): boolean {
	if (
		typeof shown !== 'string' ||
		typeof held !== 'string' ||
		held.length < MASK_VISIBLE_CHARACTERS
	)
		return false;
	return shown.endsWith(held.slice(-MASK_VISIBLE_CHARACTERS));
}
