// Everything the webhook trigger keeps in its node's static data (`getWorkflowStaticData('node')`).
// n8n loads it with every webhook request and saves it whole after the request, last writer wins
// (docs/design.md, "Exactly once"), so each field has one owner and a compact stored form. Every
// read and write goes through this file; no other field is written (test/unit/staticDataFields).
import type { IDataObject } from 'n8n-workflow';

/** Which room of the trigger writes a field. */
export type FieldOwner = 'subscription' | 'deliveries' | 'recovery';

export const STATIC_DATA_FIELDS = {
	subscriptionId: { owner: 'subscription', form: "the platform's id of the subscription (number)" },
	signingKey: { owner: 'subscription', form: 'the HMAC key the platform signs with (64 hex)' },
	authToken: { owner: 'subscription', form: 'the bearer token the platform sends (64 hex)' },
	event: { owner: 'subscription', form: 'the event subscribed to, as sent to the platform' },
	url: { owner: 'subscription', form: 'the webhook URL the subscription delivers to' },
	test: { owner: 'subscription', form: 'true for "Listen for test event"; absent otherwise' },
	secretSeed: {
		owner: 'subscription',
		form: 'the seed of the secrets (64 hex), kept for good, never cleared',
	},
	startedDeliveries: {
		owner: 'deliveries',
		form: 'the delivery ledger: `~tag.ms36` then `period36;` groups (10 minutes) of 8-character keys (deliveries/ledgerText.ts)',
	},
	recoveryScannedAt: {
		owner: 'recovery',
		form: 'when a recovery run was last started for the node (epoch ms, number)',
	},
	recoveryJudgedTo: {
		owner: 'recovery',
		form: '`subscription36.id36`: every log entry of the subscription up to that id was judged and needs nothing (recovery/scopeRecovery.ts)',
	},
	redispatchedEntries: {
		owner: 'recovery',
		form: '`subscription36 id36.tries36.minute36 ...`: the redispatches asked for (recovery/redispatchMemory.ts)',
	},
} as const satisfies Record<string, { owner: FieldOwner; form: string }>;

export type StaticDataField = keyof typeof STATIC_DATA_FIELDS;

/** The trigger node's static data as n8n hands it over (an observed object: writes mark it changed). */
export type TriggerStaticData = IDataObject;

export function readField(staticData: TriggerStaticData, field: StaticDataField): unknown {
	return staticData[field];
}

export function writeField(
	staticData: TriggerStaticData,
	field: StaticDataField,
	value: string | number | boolean,
): void {
	staticData[field] = value;
}

export function clearField(staticData: TriggerStaticData, field: StaticDataField): void {
	delete staticData[field];
}

/**
 * Marks `staticData` changed for n8n's save without changing it: n8n's static data notices writes,
 * not values, so a field written as it is counts (deliveries/staticDataSave.ts says why).
 */
export function markChanged(staticData: TriggerStaticData): void {
	const [field] = Object.keys(staticData);
	if (field === undefined) return;
	const value = staticData[field];
	staticData[field] = value;
}
