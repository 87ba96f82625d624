// The few things recovery needs of n8n and of the platform's API, as small interfaces, and the one
// adapter that builds them from the context n8n hands the trigger (a hook's or a webhook's). A run
// needs only the log and the redispatches; the schedule adds the log lines and the webhook. Each
// reaches n8n's context when it is used, never before: a context may lack what a path never uses.
import type {
	IDataObject,
	IHookFunctions,
	IHttpRequestOptions,
	IWebhookFunctions,
} from 'n8n-workflow';

import { triggerScope } from '../../shared/helpers';
import { apiRequest, keyUseOf, listPage, type KeyUse, type ListPage } from '../../shared/transport';
import {
	probeWebhook,
	readStoredSubscription,
	webhookLive,
	type StoredSubscription,
} from '../subscription';
import { PROBE_EVENT, reachedBy } from './reachability';

/** The platform's API as a run uses it: a subscription's delivery log and its redispatches. */
export interface DeliveryLogApi {
	/** one page of the subscription's delivery log (spec operation 13) */
	logPage(subscriptionId: number, page: number): Promise<ListPage>;
	/** has the platform redispatch a logged delivery (spec operation 14); its answer */
	redispatch(subscriptionId: number, entryId: number): Promise<{ data?: IDataObject } | undefined>;
	/**
	 * Whether the platform reaches `url` now (a sample sent there, spec operation 15,
	 * reachability.ts); undefined when it does not tell, the request failing included.
	 */
	reaches(url: string): Promise<boolean | undefined>;
	/** the API key's window as this process sees it (recovery's share of the key, pace.ts) */
	keyUse(): Promise<KeyUse | undefined>;
}

/** The operator's log lines about recovery, each naming the workflow. */
export interface RecoveryLog {
	info(message: string): void;
	warn(message: string): void;
}

/** The trigger's own webhook, as n8n serves it at its public URL. */
export interface OwnWebhook {
	/** the URL, when n8n has one */
	url(): string | undefined;
	/** what n8n answers an unsigned POST to `url` (subscription/probe.ts) */
	probe(url: string): Promise<number | undefined>;
	/** until `url` answers as active, or the wait gives up (subscription/probe.ts) */
	live(url: string): Promise<void>;
	/** a request through n8n's HTTP helper (the redispatch note) */
	request(options: IHttpRequestOptions): Promise<unknown>;
}

/** What the schedule hands down for one trigger node. */
export interface RecoveryHost {
	/** the trigger node, as this process keys its memory of recovery (shared/helpers/triggerScope.ts) */
	scope: string;
	api: DeliveryLogApi;
	log: RecoveryLog;
	webhook: OwnWebhook;
	/** the subscription as the node's static data holds it now */
	storedSubscription(): Partial<StoredSubscription>;
}

type Context = IHookFunctions | IWebhookFunctions;

export function deliveryLogApi(context: Context): DeliveryLogApi {
	return {
		logPage: async (subscriptionId, page) =>
			await listPage.call(context, `/${subscriptionId}/logs`, page),
		redispatch: async (subscriptionId, entryId) =>
			(await apiRequest.call(
				context,
				'POST',
				'webhook',
				`/${subscriptionId}/logs/${entryId}/redispatch`,
			)) as { data?: IDataObject } | undefined,
		reaches: async (url) => {
			try {
				const body = { event: PROBE_EVENT, url };
				const answer = await apiRequest.call(context, 'POST', 'webhook', '/relay', { body });
				return reachedBy(answer as { data?: IDataObject });
			} catch {
				return undefined;
			}
		},
		// without a usable credential the run's first request fails and says why
		keyUse: async () => await keyUseOf(context).catch(() => undefined),
	};
}

/** The trigger node `context` is of, as this process keys its memory of recovery. */
export function scopeOf(context: Context): string {
	return triggerScope.call(context);
}

export function recoveryHost(context: Context): RecoveryHost {
	const meta = () => ({ workflowId: context.getWorkflow().id });
	return {
		scope: scopeOf(context),
		api: deliveryLogApi(context),
		log: {
			info: (message) => context.logger.info(message, meta()),
			warn: (message) => context.logger.warn(message, meta()),
		},
		webhook: {
			url: () => context.getNodeWebhookUrl('default'),
			probe: async (url) => await probeWebhook.call(context, url),
			live: async (url) => await webhookLive.call(context, url),
			request: async (options) => await context.helpers.httpRequest(options),
		},
		storedSubscription: () => readStoredSubscription(context.getWorkflowStaticData('node')),
	};
}
