// Whether one request to the webhook starts an execution: it must be genuine (the bearer token and
// the signature over the bytes as received), a JSON object, of an event the trigger passes on, not
// older than allowed, and not a repeat of a delivery that already started one (the ledger).
import type { IDataObject } from 'n8n-workflow';

import { eventMatches, isWildcardEvent } from '../../shared/helpers';
import type { TriggerStaticData } from '../staticData';
import { deliveryAge } from './age';
import type { AttemptResponse } from './ledger';
import { thisProcessLedgers } from './processLedgers';
import { repeatKey, type Destination } from './repeatKey';
import { verifyDelivery, type DeliverySecrets, type VerificationFailure } from './signature';

/** The request as n8n received it. */
export interface DeliveryRequest {
	rawBody: Buffer | undefined;
	headers: Record<string, unknown>;
	/** n8n's HTTP response to it: the ledger learns n8n's answer from it */
	response: AttemptResponse;
}

/** What the trigger's settings and its stored subscription say about deliveries. */
export interface AdmissionRules {
	secrets: Partial<DeliverySecrets>;
	/** the event subscribed to (a wildcard covers several) */
	subscribedEvent: string;
	/** with a wildcard: the events passed on (empty: all it covers); read only for a wildcard */
	passOnEvents: () => string[];
	maxAgeMinutes: number | undefined;
	ignoreRepeats: boolean;
	destination: Destination;
}

export type Admission =
	/** answered with `status`; `reason` for the log */
	| {
			outcome: 'refused';
			status: 400 | 401;
			message: string;
			reason: RefusalReason;
			event?: string;
			sentAt?: string;
	  }
	/** acknowledged without an execution: an event not passed on, or a repeat */
	| { outcome: 'acknowledged'; event: string; repeated: boolean }
	| { outcome: 'new'; event: string; delivery: IDataObject };

export type RefusalReason = VerificationFailure | 'not-json' | 'too-old';

/** Verifies, then decides; a new delivery is recorded in the ledger (in `staticData`). */
export async function admitDelivery(
	request: DeliveryRequest,
	rules: AdmissionRules,
	staticData: TriggerStaticData,
): Promise<Admission> {
	const verification = verifyDelivery(
		{
			rawBody: request.rawBody,
			authorization: request.headers.authorization,
			signature: request.headers['x-signature'],
		},
		rules.secrets,
	);
	if (!verification.valid)
		return {
			outcome: 'refused',
			status: 401,
			message: 'Unauthorized',
			reason: verification.reason,
		};
	const rawBody = request.rawBody as Buffer;
	const delivery = parseDelivery(rawBody);
	if (delivery === undefined)
		return {
			outcome: 'refused',
			status: 400,
			message: 'The request body is not a JSON object',
			reason: 'not-json',
		};
	const event = typeof delivery.event === 'string' ? delivery.event : '';
	// acknowledged, so the platform does not retry an event this workflow does not want
	if (!passedOn(rules, event)) return { outcome: 'acknowledged', event, repeated: false };
	if (rules.maxAgeMinutes !== undefined) {
		const age = deliveryAge(delivery.now, rules.maxAgeMinutes, Date.now());
		if (age.tooOld)
			return {
				outcome: 'refused',
				status: 400,
				message: age.reason,
				reason: 'too-old',
				event,
				sentAt: age.sentAt,
			};
	}
	if (rules.ignoreRepeats) {
		const key = repeatKey(rules.destination, event, delivery.payload, rawBody);
		const { workflowId, nodeId } = rules.destination;
		const ledger = thisProcessLedgers().of(`${workflowId}:${nodeId}`);
		const seen = await ledger.admit(staticData, key, request.response);
		if (seen === 'repeat') return { outcome: 'acknowledged', event, repeated: true };
	}
	return { outcome: 'new', event, delivery };
}

/** Whether `event` is one the subscription covers and the trigger passes on. */
function passedOn({ subscribedEvent, passOnEvents }: AdmissionRules, event: string): boolean {
	const passOn = isWildcardEvent(subscribedEvent) ? passOnEvents() : [];
	return eventMatches(subscribedEvent, event) && (passOn.length === 0 || passOn.includes(event));
}

function parseDelivery(rawBody: Buffer): IDataObject | undefined {
	try {
		// a UTF-8 byte order mark is tolerated, as n8n's own body parser does
		const parsed: unknown = JSON.parse(rawBody.toString('utf8').replace(/^\uFEFF/, ''));
		if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
			return parsed as IDataObject;
	} catch {
		// not JSON: refused with 400
	}
	return undefined;
}

/**
 * How a refusal is logged, never with a secret or the body, so an operator can tell a wrong secret
 * from a replay or a stranger. A request that carries neither token nor signature (the trigger's
 * own liveness probe, a scanner) is routine: debug; the others at warn, as n8n logs a webhook call
 * it cannot serve.
 */
export function refusalLogLevel(reason: RefusalReason): 'debug' | 'warn' {
	return reason === 'missing-token' || reason === 'no-body' ? 'debug' : 'warn';
}
