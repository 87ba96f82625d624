import type {
	IDataObject,
	IHookFunctions,
	ILoadOptionsFunctions,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { eventPicker } from '../shared/descriptions';
import { eventMatches, friendlyEventSubtitle, isWildcardEvent } from '../shared/helpers';
import { getEvents } from '../shared/methods';
import { testLearningPlatformCredential } from '../shared/transport';
import { deliveryAge } from './deliveryAge';
import { occurrenceKey, thisProcessLedger } from './deliveryLedger';
import { occurrenceOf } from './occurrence';
import {
	noteRecoveryMark,
	recoverAfterActivation,
	recoverFromDelivery,
	stopRecovering,
} from './recoverySchedule';
import { isRedispatchNote, takeInRedispatchNote } from './redispatchNote';
import { verifyDelivery, type VerificationFailure } from './signature';
import { keepChangedUntilAnswered } from './staticDataSave';
import {
	createSubscription,
	deleteSubscription,
	readStoredSubscription,
	subscriptionExists,
} from './subscription';
import {
	claimSubscription,
	holdingRetirement,
	retireAllNow,
	retireWhenUnclaimed,
} from './subscriptionRetirement';

interface TriggerOptions {
	ignoreRepeatedDeliveries?: boolean;
	maxDeliveryAgeMinutes?: number;
	recoverMissedDeliveries?: boolean;
	keepSubscriptionWhileInactive?: boolean;
}

function triggerOptions(this: IHookFunctions | IWebhookFunctions): TriggerOptions {
	return this.getNodeParameter('options', {}) as TriggerOptions;
}

/** Missed deliveries are recovered unless turned off; never for "Listen for test event". */
function recovers(this: IHookFunctions | IWebhookFunctions): boolean {
	return this.getMode() !== 'manual' && (triggerOptions.call(this).recoverMissedDeliveries ?? true);
}

function keepsSubscriptionWhileInactive(this: IHookFunctions): boolean {
	return triggerOptions.call(this).keepSubscriptionWhileInactive === true;
}

function reject(
	this: IWebhookFunctions,
	statusCode: number,
	message: string,
): IWebhookResponseData {
	const response = this.getResponseObject();
	response.status(statusCode).json({ message });
	return { noWebhookResponse: true };
}

/** With "Recover Missed Deliveries", once the production subscription is in place. */
function startRecovery(this: IHookFunctions): void {
	if (!recovers.call(this)) return;
	const staticData = this.getWorkflowStaticData('node');
	const { subscriptionId } = readStoredSubscription(staticData);
	if (subscriptionId !== undefined) recoverAfterActivation.call(this, staticData, subscriptionId);
}

/**
 * A refused delivery, with its reason (never a secret or the body), so an operator can tell a
 * wrong secret from a replay or a stranger. A request that carries neither token nor signature
 * (the trigger's own liveness probe, a scanner) is routine: debug; the others at warn, as n8n
 * logs a webhook call it cannot serve.
 */
function logRefusal(this: IWebhookFunctions, reason: VerificationFailure): void {
	const routine = reason === 'missing-token' || reason === 'no-body';
	const log = routine ? this.logger.debug : this.logger.warn;
	log.call(this.logger, `Learning Platform Trigger: a delivery was refused (401): ${reason}`, {
		reason,
		workflowId: this.getWorkflow().id,
	});
}

function parseDelivery(rawBody: Buffer): IDataObject | undefined {
	try {
		// a UTF-8 byte order mark is tolerated, as n8n's own body parser does
		const parsed: unknown = JSON.parse(rawBody.toString('utf8').replace(/^\uFEFF/, ''));
		if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
			return parsed as IDataObject;
	} catch {
		// not JSON: answered 400 by the caller
	}
	return undefined;
}

/** Whether `event` is one the subscription covers and the node passes on. */
function wantedEvent(this: IWebhookFunctions, storedEvent: string | undefined, event: string) {
	const subscribedEvent = storedEvent ?? (this.getNodeParameter('event') as string);
	const passOnEvents = isWildcardEvent(subscribedEvent)
		? (this.getNodeParameter('passOnEvents', []) as string[])
		: [];
	return (
		eventMatches(subscribedEvent, event) &&
		(passOnEvents.length === 0 || passOnEvents.includes(event))
	);
}

/** Why a delivery sent longer ago than allowed is refused, or undefined when it is not. */
function refusalForAge(
	this: IWebhookFunctions,
	delivery: IDataObject,
	event: string,
	maxAgeMinutes: number | undefined,
): string | undefined {
	if (maxAgeMinutes === undefined) return undefined;
	const age = deliveryAge(delivery.now, maxAgeMinutes, Date.now());
	if (!age.tooOld) return undefined;
	this.logger.warn('Learning Platform Trigger: a delivery older than the allowed age was refused', {
		event,
		workflowId: this.getWorkflow().id,
		sentAt: age.sentAt,
	});
	return age.reason;
}

/**
 * Exactly once: whether the delivery ledger already holds this occurrence (of this workflow, node,
 * mode and subscription), so it started an execution before; else it is admitted now.
 */
async function isRepeat(
	this: IWebhookFunctions,
	staticData: IDataObject,
	subscriptionId: number | undefined,
	event: string,
	delivery: IDataObject,
): Promise<boolean> {
	const key = occurrenceKey(
		[this.getWorkflow().id ?? '', this.getNode().id, this.getMode(), String(subscriptionId ?? '')],
		event,
		delivery.payload === undefined || delivery.payload === null
			? this.getRequestObject().rawBody.toString('base64')
			: occurrenceOf(event, delivery.payload),
	);
	return (await thisProcessLedger().admit(staticData, key, this.getResponseObject())) === 'repeat';
}

export class LearningPlatformTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Learning Platform Trigger',
		name: 'learningPlatformTrigger',
		icon: { light: 'file:learningPlatform.svg', dark: 'file:learningPlatform.dark.svg' },
		group: ['trigger'],
		// Not 1: n8n evaluates an expression for every delivery to a webhook start node of
		// typeVersion 1 (its Webhook node's old binaryData option), which under its VM engine costs
		// an isolate per delivery (docs/webhook-throughput.md). At 2 it evaluates none.
		version: 2,
		// "Course completion created" on the canvas, not the cut-off Events\Courses\Completion_...
		subtitle: friendlyEventSubtitle('event'),
		description:
			'Starts the workflow the moment the platform pushes an event (course completed, user created, quiz attempt...). Needs n8n at a public https:// address; without one, use the Learning Platform Completion Trigger, which polls.',
		defaults: {
			name: 'Learning Platform Trigger',
		},
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'learningPlatformApi', required: true, testedBy: 'learningPlatformApiTest' },
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				// Empty, so n8n answers with the node's `webhookResponse` (n8n's default here would
				// send the literal text "firstEntryJson", which then shows in the platform's delivery log).
				responseData: '',
				path: 'webhook',
			},
		],
		properties: [
			// A fixed list (the spec's events), named "Event": n8n's node picker then lists one entry
			// per event ("On course completion created"), as for its own triggers.
			eventPicker({
				fixedList: {
					// n8n cannot show advice only when it applies (displayOptions compare parameters, and
					// nothing in a description can read the webhook URL), so the HTTPS rule is a quiet
					// hint, and activation refuses an http:// URL with an explanation before sending anything.
					hint: "The platform delivers only to https:// addresses: check that the Webhook URLs above start with https://. If not, set n8n's WEBHOOK_URL to its public https:// address, or use the Learning Platform Completion Trigger (polls, no public address needed).",
				},
				description:
					'The event to subscribe to. A wildcard (Any event, or Any ... event of one category) subscribes to every event it covers. An event not listed here can be given as an expression with its full name, e.g. Events\\Courses\\Completion_created.',
			}),
			{
				displayName: 'Pass On Event Names or IDs',
				name: 'passOnEvents',
				type: 'multiOptions',
				typeOptions: {
					loadOptionsMethod: 'getConcreteEvents',
				},
				displayOptions: {
					show: {
						event: [{ _cnd: { endsWith: '*' } }],
					},
				},
				default: [],
				description:
					'With a wildcard event: start the workflow only for these events; others are acknowledged and dropped. Empty passes on every event the wildcard covers. Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Ignore Repeated Deliveries',
						name: 'ignoreRepeatedDeliveries',
						type: 'boolean',
						default: true,
						description:
							'Whether to acknowledge a delivery of an event that already ran the workflow in the last 74 hours (a platform retry after a time-out, or a redispatch) without running it again, whichever n8n process receives it. Turn off to run the workflow for every delivery.',
					},
					{
						displayName: 'Keep Subscription While Inactive',
						name: 'keepSubscriptionWhileInactive',
						type: 'boolean',
						default: false,
						description:
							'Whether deactivating the workflow keeps its subscription at the platform, so the completions made while it is off are delivered (once each) when it is activated again. The subscription keeps counting towards the 100 the API key may have; delete it with the Learning Platform node (Webhook → Delete) if the workflow is deleted while inactive.',
					},
					{
						displayName: 'Recover Missed Deliveries',
						name: 'recoverMissedDeliveries',
						type: 'boolean',
						default: true,
						description:
							'Whether to have the platform send again the deliveries it could not make while n8n was down or unreachable (up to three days back, a weekend), so each still runs the workflow once. Checked on activation, on the first delivery after n8n starts, and every 15 minutes while active.',
					},
					{
						displayName: 'Reject Deliveries Older Than (Minutes)',
						name: 'maxDeliveryAgeMinutes',
						type: 'number',
						typeOptions: { minValue: 1 },
						default: 60,
						description:
							"Refuse a delivery sent longer ago than this, so a copy of a genuine delivery replayed later starts nothing, even after n8n restarts. The send time is the delivery's signed <code>now</code>. A platform retry of an older delivery is refused too: redispatch it from the platform's delivery log (a redispatch is sent with a new time). Leave room for a clock difference between the platform and n8n.",
					},
				],
			},
		],
	};

	methods = {
		loadOptions: {
			async getConcreteEvents(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
				const options = await getEvents.call(this);
				return options.filter((option) => !isWildcardEvent(String(option.value)));
			},
		},
		credentialTest: {
			learningPlatformApiTest: testLearningPlatformCredential,
		},
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const webhookUrl = this.getNodeWebhookUrl('default') as string;
				const event = this.getNodeParameter('event') as string;
				const look = async () => await subscriptionExists.call(this, webhookUrl, event);
				const exists =
					this.getMode() === 'manual' ? await look() : await holdingRetirement.call(this, look);
				if (exists) startRecovery.call(this);
				return exists;
			},

			async create(this: IHookFunctions): Promise<boolean> {
				const webhookUrl = this.getNodeWebhookUrl('default') as string;
				const event = this.getNodeParameter('event') as string;
				const test = this.getMode() === 'manual';
				// subscriptions waiting to be retired (this trigger's, or a workflow's just switched off)
				// may hold the API key's last free places
				await createSubscription.call(this, webhookUrl, event, { test, freePlaces: retireAllNow });
				if (!test) await claimSubscription.call(this);
				startRecovery.call(this);
				return true;
			},

			async delete(this: IHookFunctions): Promise<boolean> {
				stopRecovering.call(this);
				const keep = keepsSubscriptionWhileInactive.call(this);
				const { subscriptionId, test } = readStoredSubscription(this.getWorkflowStaticData('node'));
				if (keep || test || subscriptionId === undefined)
					return await deleteSubscription.call(this, { keep });
				// n8n may be about to activate this trigger again (a published edit): docs/design.md
				retireWhenUnclaimed.call(this, subscriptionId);
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject();
		const staticData = this.getWorkflowStaticData('node');
		const stored = readStoredSubscription(staticData);

		// what another n8n process's recovery run asked for (its key's signature alone: no token sent)
		if (isRedispatchNote(request.headers)) {
			const note = takeInRedispatchNote.call(this, staticData, recovers.call(this));
			if (!note.valid) {
				logRefusal.call(this, note.reason);
				return reject.call(this, 401, 'Unauthorized');
			}
			return { webhookResponse: { received: true, passedOn: false } };
		}

		// Both checks on the bytes as received; no secrets stored means nothing can be trusted.
		const verification = verifyDelivery(
			{
				rawBody: request.rawBody,
				authorization: request.headers.authorization,
				signature: request.headers['x-signature'],
			},
			{ signingKey: stored.signingKey, authToken: stored.authToken },
		);
		if (!verification.valid) {
			logRefusal.call(this, verification.reason);
			return reject.call(this, 401, 'Unauthorized');
		}

		const delivery = parseDelivery(request.rawBody);
		if (delivery === undefined)
			return reject.call(this, 400, 'The request body is not a JSON object');

		const event = typeof delivery.event === 'string' ? delivery.event : '';
		// Acknowledged, so the platform does not retry an event this workflow does not want.
		if (!wantedEvent.call(this, stored.event, event))
			return { webhookResponse: { received: true, passedOn: false } };

		const options = triggerOptions.call(this);
		const tooOld = refusalForAge.call(this, delivery, event, options.maxDeliveryAgeMinutes);
		if (tooOld !== undefined) return reject.call(this, 400, tooOld);

		const subscriptionToRecover = recovers.call(this) ? stored.subscriptionId : undefined;
		if (
			options.ignoreRepeatedDeliveries !== false &&
			(await isRepeat.call(this, staticData, stored.subscriptionId, event, delivery))
		) {
			// a repeat too tells this process which recovery runs the others started
			if (subscriptionToRecover !== undefined)
				noteRecoveryMark.call(this, staticData, subscriptionToRecover);
			this.logger.debug(
				'Learning Platform Trigger: a repeated delivery was acknowledged without an execution',
				{ event, workflowId: this.getWorkflow().id },
			);
			return { webhookResponse: { received: true, passedOn: false, repeated: true } };
		}
		if (subscriptionToRecover !== undefined)
			recoverFromDelivery.call(
				this,
				staticData,
				subscriptionToRecover,
				typeof delivery.delivery_id === 'string' && delivery.delivery_id !== '',
			);

		// n8n 2.x would otherwise save none of what this delivery wrote (staticDataSave.ts)
		keepChangedUntilAnswered(staticData, this.getResponseObject());
		// The delivery as sent: event, payload (timestamps untouched), now, delivery_id, api_version.
		return {
			webhookResponse: { received: true, passedOn: true },
			workflowData: [this.helpers.returnJsonArray(delivery)],
		};
	}
}
