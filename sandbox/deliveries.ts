/**
 * Outgoing webhook deliveries (spec §Events, delivery rules), sent with undici.
 *
 * - An HTTP POST to the subscription url, always `content-type: application/json` (whatever
 *   `content_type_header` says), body `{event, payload, now, delivery_id, api_version: "2.0"}`
 *   (`delivery_id` '' for normal deliveries).
 * - `x-signature`: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with `signing_key`,
 *   when one is set; `authorization: Bearer <auth_token>` when one is set; `auth_type` is ignored.
 * - A disabled or deleted subscription receives nothing (checked before every attempt).
 * - Every attempt is recorded (spec rule 6) in the delivery log, as `config.deliveryLog` reads it:
 *   `perDelivery`, in the delivery's entry (`tries` counts the attempts, the other fields describe
 *   the latest); `perAttempt`, as an entry of its own (`tries` is the attempt's number); and as a
 *   row of /__sandbox/deliveries, whose `delivery_ref` ties a delivery's attempts together.
 * - Non-2xx, network error or time-out -> retried after `deliveryBackoffMs` doubling each time
 *   (a gap is at most Node's largest timer, about 24.8 days), up to `deliveryMaxAttempts` attempts
 *   in all, except after an answer whose status is in `deliveryNoRetryStatuses`; each attempt
 *   times out after `deliveryTimeoutMs`. Retries re-send exactly the same bytes.
 * - Redispatch (operation 14), as `config.redispatchEntry` reads it: `marks`, the entry asked for
 *   gets `redispatched: true` and the new `delivery_id` (and with `perDelivery` records the new
 *   attempts); `flagOnly`, it gets `redispatched: true` and a new `updated_at` only; `untouched`,
 *   nothing. Under the last two the redispatch is logged as a delivery of its own (new entries,
 *   `redispatched: true`, the new `delivery_id`). `config.redispatchPayload`: `original` re-sends
 *   the logged payload, `current` renders a completion event's payload again from the record.
 * - https URLs are verified against the system roots plus `trustedCaPem`.
 * - A host under `.invalid` fails at once, as RFC 6761 (6.4) asks of name resolution, without a
 *   DNS query: tests point subscriptions at `n8n.invalid` for an n8n that is down, and a burst
 *   of lookups must not stall on the machine's resolver.
 * - Delivery faults (faults.ts: `dropAnswer`, `answerTimeout`) make an attempt fail after the
 *   receiver got the whole request: its answer is discarded, or not waited for.
 * - Each attempt row has `sent_at` (ISO 8601 with milliseconds, sandbox clock): when it was sent.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { lookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import type { Sandbox } from './http';
import type { DeliveryLog, Subscription } from './types';
import { completionPayload, eventMatches } from './events';
import type { DeliveryFault } from './faults';
import { MAX_TIMER_MS } from './store';
import { isoZ, unixSeconds } from './util';

export const USER_AGENT = 'LearningPlatform-Webhooks/2.0 (sandbox)';
const MAX_RESPONSE_CHARS = 2000;

export const sign = (key: string, body: string) =>
	createHmac('sha256', key).update(body, 'utf8').digest('hex');

/** One delivery (a dispatch or a redispatch) through its attempts. */
interface Delivery {
	/** the entry it was dispatched as, or the entry whose redispatch it is */
	origin: DeliveryLog;
	body: string;
	/** the payload in `body` (what the entries of this delivery keep, for a later redispatch) */
	payload: unknown;
	/** with one entry per delivery: the entry every attempt updates */
	entry?: DeliveryLog;
}

interface SendResult {
	status_code: number | null;
	response: string;
	error: string | null;
	response_time_ms: number;
}

type LookupCallback = (
	error: NodeJS.ErrnoException | null,
	address: string | LookupAddress[],
	family?: number,
) => void;

/** `dns.lookup`, except that a name under `.invalid` fails at once (RFC 6761, 6.4). */
function lookupExceptInvalid(
	hostname: string,
	options: LookupOptions,
	callback: LookupCallback,
): void {
	if (/(^|\.)invalid\.?$/i.test(hostname)) {
		const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
		error.code = 'ENOTFOUND';
		error.syscall = 'getaddrinfo';
		process.nextTick(() => callback(error, ''));
		return;
	}
	lookup(hostname, options as LookupAllOptions, callback as never);
}

export class Deliveries {
	private readonly agent: Agent;
	private readonly timers = new Set<NodeJS.Timeout>();
	private readonly inflight = new Set<AbortController>();
	private closed = false;

	constructor(
		private readonly sb: () => Sandbox,
		trustedCaPem: string[],
	) {
		this.agent = new Agent({
			connect: {
				lookup: lookupExceptInvalid,
				// one context for every connection: given as `ca`, Node would parse every root
				// certificate again for each attempt (tens of ms of CPU each)
				...(trustedCaPem.length
					? { secureContext: createSecureContext({ ca: [...rootCertificates, ...trustedCaPem] }) }
					: {}),
			},
			keepAliveTimeout: 1000,
		});
	}

	/** number of attempts scheduled or in flight */
	get pending(): number {
		return this.timers.size + this.inflight.size;
	}

	body(event: string, payload: unknown, deliveryId: string): string {
		return JSON.stringify({
			event,
			payload,
			now: unixSeconds(this.sb().store.now()),
			delivery_id: deliveryId,
			api_version: '2.0',
		});
	}

	/** An event happened: each enabled, not deleted subscription whose event or wildcard matches gets a delivery. */
	dispatch(event: string, payload: unknown, completionId: number | null = null): number {
		const { store } = this.sb();
		let n = 0;
		for (const sub of store.subscriptions.values()) {
			if (sub.deleted_at !== null || !sub.is_enabled || !eventMatches(sub.event, event)) continue;
			const entry = this.newEntry(sub.id, event, payload, completionId);
			if (store.config.deliveryLog === 'perDelivery') store.logs.set(entry.id, entry);
			const delivery: Delivery = {
				origin: entry,
				body: this.body(event, payload, ''),
				payload,
				// one entry per attempt: the first attempt's entry keeps the id reserved here
				entry: store.config.deliveryLog === 'perDelivery' ? entry : undefined,
			};
			this.schedule(sub, delivery, 1, 0);
			n++;
		}
		store.dirty();
		return n;
	}

	/**
	 * Manual redispatch of a logged delivery: the same event, a fresh `now` and a non-empty
	 * `delivery_id`; the logged payload (`redispatchPayload: original`) or, for an entry of a
	 * completion record, the payload rendered again from the record as it is now (`current`).
	 * `redispatchEntry: marks`: the entry asked for gets `redispatched: true` and that
	 * `delivery_id`; with one entry per delivery it also records the new attempts, with one entry
	 * per attempt each new attempt gets an entry of its own (`redispatched: true`, the same
	 * `delivery_id`). `flagOnly`: the entry asked for gets `redispatched: true` and a new
	 * `updated_at`, nothing else; `untouched`: it is not changed. Under both the redispatch is
	 * logged like a new delivery (one entry, or one per attempt), each entry with
	 * `redispatched: true` and the new `delivery_id`.
	 */
	redispatch(sub: Subscription, log: DeliveryLog) {
		const { store } = this.sb();
		const deliveryId = randomUUID();
		const payload = this.redispatchPayload(log);
		const body = this.body(log.event_type, payload, deliveryId);
		const perDelivery = store.config.deliveryLog === 'perDelivery';
		const mode = store.config.redispatchEntry;
		if (mode !== 'untouched') {
			log.redispatched = true;
			log.updated_at = store.now();
		}
		if (mode === 'marks') log.delivery_id = deliveryId;
		// with one entry per delivery, the entry the attempts update: under `marks` the one asked
		// for, else a new one; with one entry per attempt, each attempt's entry is a new one anyway
		let entry: DeliveryLog | undefined;
		if (perDelivery && mode === 'marks') entry = log;
		else if (perDelivery) {
			entry = this.newEntry(log.subscriptionId, log.event_type, payload, log.completionId);
			entry.ref = log.ref;
			entry.delivery_id = deliveryId;
			entry.redispatched = true;
			store.logs.set(entry.id, entry);
		}
		this.schedule(sub, { origin: log, body, payload, entry }, 1, 0);
	}

	/** `current`: a completion event's payload from the record as it is now; else the logged one. */
	private redispatchPayload(log: DeliveryLog): unknown {
		const sb = this.sb();
		if (sb.store.config.redispatchPayload !== 'current' || log.completionId === null)
			return log.payload;
		const rec = sb.store.feed.get(log.completionId);
		return rec ? completionPayload(sb, rec) : log.payload;
	}

	private newEntry(
		subscriptionId: number,
		event: string,
		payload: unknown,
		completionId: number | null,
	): DeliveryLog {
		const { store } = this.sb();
		const now = store.now();
		const id = store.next('logId');
		return {
			id,
			subscriptionId,
			event_type: event,
			delivery_id: '',
			success: false,
			tries: 0,
			status_code: null,
			response: '',
			response_time_ms: null,
			redispatched: false,
			created_at: now,
			updated_at: now,
			payload,
			completionId,
			ref: id,
		};
	}

	/** Relay with url: one attempt to an arbitrary URL, never to stored subscriptions. */
	async relay(url: string, event: string, body: string): Promise<SendResult> {
		const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
		const sentAt = this.sb().store.now();
		const res = await this.send(url, headers, body);
		this.record(
			null,
			null,
			null,
			null,
			url,
			event,
			JSON.parse(body).delivery_id,
			body,
			headers,
			1,
			sentAt,
			res,
		);
		return res;
	}

	private schedule(sub: Subscription, delivery: Delivery, attempt: number, delayMs: number) {
		if (this.closed) return;
		const t = setTimeout(() => {
			this.timers.delete(t);
			void this.attempt(sub.id, delivery, attempt);
		}, delayMs);
		this.timers.add(t);
	}

	private async attempt(subId: number, delivery: Delivery, attempt: number) {
		const sb = this.sb();
		const sub = sb.store.subscriptions.get(subId);
		if (this.closed || !sub || sub.deleted_at !== null || !sub.is_enabled) return;
		const { origin, body } = delivery;
		const headers: Record<string, string> = {
			'content-type': 'application/json',
			'user-agent': USER_AGENT,
		};
		if (sub.signing_key) headers['x-signature'] = sign(sub.signing_key, body);
		if (sub.auth_token) headers.authorization = `Bearer ${sub.auth_token}`;
		const fault = sb.faults.pickDelivery(sub.url, attempt);
		const sentAt = sb.store.now();
		const res = await this.send(sub.url, headers, body, fault);
		if (this.closed) return;
		const ok = res.status_code !== null && res.status_code >= 200 && res.status_code < 300;
		const deliveryId = (JSON.parse(body) as { delivery_id: string }).delivery_id;
		const log = delivery.entry ?? this.attemptEntry(delivery, deliveryId, attempt, sentAt);
		log.tries = delivery.entry ? log.tries + 1 : attempt;
		log.success = ok;
		log.status_code = res.status_code;
		log.response = res.error ?? res.response;
		log.response_time_ms = res.response_time_ms;
		log.updated_at = sb.store.now();
		sb.store.logs.set(log.id, log);
		this.record(
			sub.id,
			log.id,
			origin.ref,
			sub.owner,
			sub.url,
			log.event_type,
			// the attempt's own: an entry redispatched twice holds the later redispatch's id
			deliveryId,
			body,
			headers,
			attempt,
			sentAt,
			res,
		);
		const { deliveryMaxAttempts, deliveryBackoffMs, deliveryNoRetryStatuses } = sb.store.config;
		const final = res.status_code !== null && deliveryNoRetryStatuses.includes(res.status_code);
		if (!ok && !final && attempt < deliveryMaxAttempts)
			this.schedule(
				sub,
				delivery,
				attempt + 1,
				Math.min(deliveryBackoffMs * 2 ** (attempt - 1), MAX_TIMER_MS),
			);
		sb.store.dirty();
	}

	/** With one entry per attempt: the entry of this attempt (the first reuses the id reserved at dispatch). */
	private attemptEntry(
		{ origin, payload }: Delivery,
		deliveryId: string,
		attempt: number,
		sentAt: number,
	): DeliveryLog {
		const first = attempt === 1 && deliveryId === '';
		const entry = first
			? { ...origin }
			: this.newEntry(origin.subscriptionId, origin.event_type, payload, origin.completionId);
		entry.ref = origin.ref;
		entry.delivery_id = deliveryId;
		entry.redispatched = deliveryId !== '';
		entry.created_at = sentAt;
		return entry;
	}

	private record(
		subscriptionId: number | null,
		logId: number | null,
		deliveryRef: number | null,
		username: string | null,
		url: string,
		event: string,
		deliveryId: string,
		body: string,
		headers: Record<string, string>,
		attempt: number,
		sentAt: number,
		res: SendResult,
	) {
		const { store } = this.sb();
		store.addAttempt({
			id: store.next('attemptId'),
			subscription_id: subscriptionId,
			log_id: logId,
			delivery_ref: deliveryRef,
			username,
			url,
			event,
			delivery_id: deliveryId,
			body,
			headers,
			attempt,
			status_code: res.status_code,
			error: res.error,
			response: res.error ? null : res.response,
			response_time_ms: res.response_time_ms,
			at: isoZ(store.now()),
			sent_at: new Date(sentAt).toISOString(),
		});
	}

	/** One attempt; a delivery fault makes it fail after the receiver got the request. */
	private async send(
		url: string,
		headers: Record<string, string>,
		body: string,
		fault: DeliveryFault | null = null,
	): Promise<SendResult> {
		const started = performance.now();
		const exchange = this.exchange(url, headers, body, started);
		if (fault?.kind === 'dropAnswer') {
			const res = await exchange;
			return {
				status_code: null,
				response: '',
				error: `answer dropped (fault): the receiver answered ${res.status_code ?? res.error}`,
				response_time_ms: res.response_time_ms,
			};
		}
		if (fault?.kind === 'answerTimeout') {
			// Not aborted: the receiver goes on with the request; whatever it answers is discarded.
			void exchange;
			await new Promise((resolve) => setTimeout(resolve, fault.timeoutMs));
			return {
				status_code: null,
				response: '',
				error: `timed out after ${fault.timeoutMs} ms (fault: answer not awaited)`,
				response_time_ms: Math.round(performance.now() - started),
			};
		}
		return await exchange;
	}

	/** POSTs the body and reads the whole answer (time-out `deliveryTimeoutMs`); never throws. */
	private async exchange(
		url: string,
		headers: Record<string, string>,
		body: string,
		started: number,
	): Promise<SendResult> {
		const timeoutMs = this.sb().store.config.deliveryTimeoutMs;
		const ac = new AbortController();
		this.inflight.add(ac);
		const timer = setTimeout(
			() => ac.abort(new Error(`timed out after ${timeoutMs} ms`)),
			timeoutMs,
		);
		try {
			const res = await request(url, {
				method: 'POST',
				headers,
				body,
				dispatcher: this.agent,
				signal: ac.signal,
				headersTimeout: timeoutMs,
				bodyTimeout: timeoutMs,
			});
			const text = await res.body.text();
			return {
				status_code: res.statusCode,
				response: text.slice(0, MAX_RESPONSE_CHARS),
				error: null,
				response_time_ms: Math.round(performance.now() - started),
			};
		} catch (e) {
			const err = e as Error & { cause?: Error; code?: string };
			const reason =
				ac.signal.aborted && ac.signal.reason instanceof Error
					? ac.signal.reason.message
					: (err.cause?.message ?? err.message);
			return {
				status_code: null,
				response: '',
				error: String(reason).slice(0, MAX_RESPONSE_CHARS),
				response_time_ms: Math.round(performance.now() - started),
			};
		} finally {
			clearTimeout(timer);
			this.inflight.delete(ac);
		}
	}

	/** Drops every scheduled attempt and aborts those in flight (on reset). */
	cancelAll() {
		for (const t of this.timers) clearTimeout(t);
		this.timers.clear();
		for (const ac of this.inflight) ac.abort(new Error('sandbox reset'));
	}

	async close() {
		this.closed = true;
		for (const t of this.timers) clearTimeout(t);
		this.timers.clear();
		for (const ac of this.inflight) ac.abort(new Error('sandbox closing'));
		await this.agent.destroy().catch(() => undefined);
	}
}
