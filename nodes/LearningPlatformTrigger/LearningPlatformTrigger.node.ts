// The webhook trigger: wires n8n's calls to its three rooms, subscription/, deliveries/ and
// recovery/ (docs/layout.md). The rules live in the rooms.
import type {
	IHookFunctions,
	ILoadOptionsFunctions,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { NodeConnectionTypes } from 'n8n-workflow';

import { friendlyEventSubtitle, isWildcardEvent } from '../shared/helpers';
import { getEvents } from '../shared/methods';
import { testLearningPlatformCredential } from '../shared/transport';
import {
	admitDelivery,
	keepChangedUntilAnswered,
	refusalLogLevel,
	type Admission,
	type AdmissionRules,
	type RefusalReason,
} from './deliveries';
import { triggerProperties } from './description';
import { keepsSubscriptionWhileInactive, passOnEvents, recovers, triggerOptions } from './options';
import {
	isRedispatchNote,
	noteRecoveryMark,
	recoverAfterActivation,
	recoverFromDelivery,
	stopRecovering,
	takeInRedispatchNote,
} from './recovery';
import {
	readStoredSubscription,
	registerSubscription,
	releaseSubscription,
	subscriptionInPlace,
	type StoredSubscription,
} from './subscription';
import type { TriggerStaticData } from './staticData';

/** With "Recover Missed Deliveries", once the production subscription is in place. */
function startRecovery(context: IHookFunctions): void {
	if (!recovers(context)) return;
	const staticData = context.getWorkflowStaticData('node');
	const { subscriptionId } = readStoredSubscription(staticData);
	if (subscriptionId !== undefined) recoverAfterActivation(context, staticData, subscriptionId);
}

function admissionRules(
	context: IWebhookFunctions,
	stored: Partial<StoredSubscription>,
): AdmissionRules {
	const options = triggerOptions(context);
	return {
		secrets: { signingKey: stored.signingKey, authToken: stored.authToken },
		subscribedEvent: stored.event ?? (context.getNodeParameter('event') as string),
		passOnEvents: () => passOnEvents(context),
		maxAgeMinutes: options.maxDeliveryAgeMinutes,
		ignoreRepeats: options.ignoreRepeatedDeliveries !== false,
		destination: {
			workflowId: context.getWorkflow().id ?? '',
			nodeId: context.getNode().id,
			mode: context.getMode(),
			subscriptionId: stored.subscriptionId,
		},
	};
}

/** A delivery that passed the checks tells recovery what it learnt, and may set a run off. */
function informRecovery(
	context: IWebhookFunctions,
	admission: Admission,
	staticData: TriggerStaticData,
	subscriptionId: number,
): void {
	if (admission.outcome === 'acknowledged' && admission.repeated)
		noteRecoveryMark(context, staticData, subscriptionId);
	if (admission.outcome !== 'new') return;
	const deliveryId = admission.delivery.delivery_id;
	const redispatch = typeof deliveryId === 'string' && deliveryId !== '';
	recoverFromDelivery(context, staticData, subscriptionId, redispatch);
}

/** n8n's answer to the platform, and the operator's log line. */
function answer(
	context: IWebhookFunctions,
	admission: Admission,
	staticData: TriggerStaticData,
): IWebhookResponseData {
	const workflowId = context.getWorkflow().id;
	switch (admission.outcome) {
		case 'refused': {
			if (admission.reason === 'too-old')
				context.logger.warn(
					'Learning Platform Trigger: a delivery older than the allowed age was refused',
					{ event: admission.event, workflowId, sentAt: admission.sentAt },
				);
			else if (admission.reason !== 'not-json') logRefusal(context, admission.reason);
			context.getResponseObject().status(admission.status).json({ message: admission.message });
			return { noWebhookResponse: true };
		}
		case 'acknowledged':
			if (!admission.repeated) return { webhookResponse: { received: true, passedOn: false } };
			context.logger.debug(
				'Learning Platform Trigger: a repeated delivery was acknowledged without an execution',
				{ event: admission.event, workflowId },
			);
			return { webhookResponse: { received: true, passedOn: false, repeated: true } };
		case 'new':
			// n8n 2.x would otherwise save none of what this delivery wrote (deliveries/staticDataSave.ts)
			keepChangedUntilAnswered(staticData, context.getResponseObject());
			// The delivery as sent: event, payload (timestamps untouched), now, delivery_id, api_version.
			return {
				webhookResponse: { received: true, passedOn: true },
				workflowData: [context.helpers.returnJsonArray(admission.delivery)],
			};
	}
}

function logRefusal(context: IWebhookFunctions, reason: RefusalReason): void {
	const level = refusalLogLevel(reason);
	context.logger[level](`Learning Platform Trigger: a delivery was refused (401): ${reason}`, {
		reason,
		workflowId: context.getWorkflow().id,
	});
}

/** What another n8n process's recovery run asked for (signed with the subscription's key alone). */
function answerNote(
	context: IWebhookFunctions,
	staticData: TriggerStaticData,
): IWebhookResponseData {
	const note = takeInRedispatchNote(context, staticData, recovers(context));
	if (note.valid) return { webhookResponse: { received: true, passedOn: false } };
	logRefusal(context, note.reason);
	context.getResponseObject().status(401).json({ message: 'Unauthorized' });
	return { noWebhookResponse: true };
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
		properties: triggerProperties,
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
				const exists = await subscriptionInPlace.call(this);
				if (exists) startRecovery(this);
				return exists;
			},

			async create(this: IHookFunctions): Promise<boolean> {
				await registerSubscription.call(this);
				startRecovery(this);
				return true;
			},

			async delete(this: IHookFunctions): Promise<boolean> {
				stopRecovering(this);
				return await releaseSubscription.call(this, keepsSubscriptionWhileInactive(this));
			},
		},
	};

	/** Verify and decide (deliveries/), tell recovery what was learnt (recovery/), answer. */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject();
		const staticData = this.getWorkflowStaticData('node');
		if (isRedispatchNote(request.headers)) return answerNote(this, staticData);
		const stored = readStoredSubscription(staticData);
		const admission = await admitDelivery(
			{ rawBody: request.rawBody, headers: request.headers, response: this.getResponseObject() },
			admissionRules(this, stored),
			staticData,
		);
		if (recovers(this) && stored.subscriptionId !== undefined)
			informRecovery(this, admission, staticData, stored.subscriptionId);
		return answer(this, admission, staticData);
	}
}
