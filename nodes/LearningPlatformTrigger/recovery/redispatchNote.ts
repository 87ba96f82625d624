// What a recovery run asked for (redispatchMemory.ts) reaches the other n8n processes, and an n8n
// restarted later, only in the static data n8n saves with a request the trigger serves. In queue
// mode n8n's main process serves none, yet runs recovery after activation and on its schedule:
// what it asked for stayed in its memory, and under a platform that leaves a redispatched entry
// untouched, a webhook process's run after a restart of every process asked for it again. So a
// run that asked for anything sends this process's memory to the trigger's own webhook URL, signed
// with the subscription's key (no bearer token: nothing secret travels); whichever process serves
// it takes it in, and n8n saves it. docs/design.md, "Missed deliveries".
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { clock } from '../../shared/transport';
import { scopeOf, type RecoveryHost } from './host';
import { rememberedText, takeInRemembered } from './redispatchMemory';
import { computeSignature, verifySignature, type VerificationResult } from '../deliveries';
import { readStoredSubscription } from '../subscription';

/** Marks a request as the trigger's own note, not a delivery of the platform. */
const NOTE_HEADER = 'x-learning-platform-note';
const NOTE_KIND = 'redispatched-entries';
/**
 * The note leaves this long after its run's last redispatch: the deliveries the platform sends at
 * once for them have been served by then, so no save of theirs, loaded before the note's, comes
 * after it and puts back static data without what the note carried.
 */
const NOTE_DELAY_MS = 5_000;

interface Note {
	subscription_id: number;
	entries: string;
}

/**
 * Sends what this process remembers asking for, for `subscriptionId`, to the trigger's webhook;
 * what came of it, for the run's log line. Best effort: a note that does not arrive leaves things
 * as before notes (a process that never learnt the memory may ask again; the delivery ledger
 * runs the delivery once).
 */
export async function sendRedispatchNote(
	host: Pick<RecoveryHost, 'scope' | 'storedSubscription' | 'webhook'>,
	subscriptionId: number,
): Promise<string> {
	await clock().sleep(NOTE_DELAY_MS);
	const entries = rememberedText(host.scope, subscriptionId);
	const stored = host.storedSubscription();
	const url = host.webhook.url();
	if (entries === undefined) return 'not sent: nothing to tell';
	if (!url) return 'not sent: no webhook URL';
	if (!stored.signingKey || stored.subscriptionId !== subscriptionId)
		return 'not sent: the subscription was replaced';
	const note: Note = { subscription_id: subscriptionId, entries };
	const body = JSON.stringify(note);
	try {
		const response = (await host.webhook.request({
			method: 'POST',
			url,
			body,
			headers: {
				'content-type': 'application/json',
				'x-signature': computeSignature(stored.signingKey, Buffer.from(body)).toString('hex'),
				[NOTE_HEADER]: NOTE_KIND,
			},
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			// n8n's own public URL, as the liveness probe (subscription/probe.ts): the note carries no
			// secret, only entry ids and the signature over them
			skipSslCertificateValidation: true,
			timeout: 10_000,
		})) as { statusCode?: number };
		return `answered ${response.statusCode}`;
	} catch (error) {
		return `not sent: ${(error as Error).message}`;
	}
}

/** Whether a request to the webhook is a note (`sendRedispatchNote`) rather than a delivery. */
export function isRedispatchNote(headers: Record<string, unknown>): boolean {
	return headers[NOTE_HEADER] === NOTE_KIND;
}

/**
 * Takes in a note signed with the subscription's key and about it (with `recovering`; a trigger
 * that recovers nothing ignores it), writing it into `staticData` for n8n to save with this
 * request. Invalid when the signature does not hold.
 */
export function takeInRedispatchNote(
	context: IWebhookFunctions,
	staticData: IDataObject,
	recovering: boolean,
): VerificationResult {
	const request = context.getRequestObject();
	const { signingKey, subscriptionId } = readStoredSubscription(staticData);
	if (!signingKey) return { valid: false, reason: 'no-secrets' };
	if (!Buffer.isBuffer(request.rawBody)) return { valid: false, reason: 'no-body' };
	const verification = verifySignature(request.rawBody, request.headers['x-signature'], signingKey);
	if (!verification.valid) return verification;
	let note: Partial<Note> = {};
	try {
		note = JSON.parse(request.rawBody.toString('utf8')) as Partial<Note>;
	} catch {
		// signed by the key's holder, yet not a note: nothing to take in
	}
	if (
		recovering &&
		subscriptionId !== undefined &&
		note.subscription_id === subscriptionId &&
		typeof note.entries === 'string'
	)
		takeInRemembered(scopeOf(context), staticData, subscriptionId, note.entries, clock().now());
	return verification;
}
