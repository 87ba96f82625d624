/**
 * The one in-memory store of the sandbox: the tenancy's data, the API users and their tokens,
 * webhook subscriptions and logs, pending report requests, the request log, the clock and the
 * live configuration. Optionally mirrored to a JSON state file so tokens (above all) survive a
 * restart.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { FeedLog } from './feedLog';
import type {
	ApiUser,
	Attendance,
	Bookmark,
	Content,
	DeliveryAttempt,
	DeliveryLog,
	Learner,
	ReportRequest,
	RequestLogEntry,
	Subscription,
} from './types';
import { prng, type Prng } from './util';

export interface SandboxConfig {
	rateLimitPerMinute: number;
	reportReadyAfterPolls: number;
	reportReadyAfterMs: number;
	feedVisibilityDelayMs: number;
	deliveryMaxAttempts: number;
	deliveryBackoffMs: number;
	deliveryTimeoutMs: number;
	/** sandbox-only relaxation: accept http:// webhook and relay URLs (default false: HTTPS only, as the spec) */
	allowHttpWebhookUrls: boolean;
	/** the tenancy's did-not-complete feature (feed status `Did Not Complete`), default false */
	didNotCompleteEnabled: boolean;
	/**
	 * The delivery log's reading of spec rule 6 ("every attempt is recorded"): `perDelivery`, one
	 * entry per delivery whose `tries` counts its attempts (default), or `perAttempt`, one entry per
	 * attempt, `tries` being that attempt's number. sandbox/README.md, "Delivery log".
	 */
	deliveryLog: DeliveryLogReading;
	/**
	 * The order of operation 13's delivery log: `newestFirst` (default, descending id) or
	 * `oldestFirst` (ascending id, as a plain paginated query would list it). sandbox/README.md,
	 * "Delivery log".
	 */
	logOrder: LogOrder;
	/**
	 * What a redispatch (operation 14) does to the entry it is asked for, and where its attempts
	 * are logged: `marks` (default: the entry gets `redispatched: true` and the new `delivery_id`),
	 * `flagOnly` (the entry gets `redispatched: true` only; the attempts go to new entries) or
	 * `untouched` (the entry is not changed; the attempts go to new entries). sandbox/README.md,
	 * "Redispatch".
	 */
	redispatchEntry: RedispatchEntryReading;
	/**
	 * What a redispatch sends: `original` (default: the logged payload) or `current` (a completion
	 * event's payload rendered again from the record as it is now). sandbox/README.md, "Redispatch".
	 */
	redispatchPayload: RedispatchPayloadReading;
	/** HTTP statuses after which a delivery is not retried (default none). sandbox/README.md, retries. */
	deliveryNoRetryStatuses: number[];
}

export const DELIVERY_LOG_READINGS = ['perDelivery', 'perAttempt'] as const;
export type DeliveryLogReading = (typeof DELIVERY_LOG_READINGS)[number];
export const LOG_ORDERS = ['newestFirst', 'oldestFirst'] as const;
export type LogOrder = (typeof LOG_ORDERS)[number];
export const REDISPATCH_ENTRY_READINGS = ['marks', 'flagOnly', 'untouched'] as const;
export type RedispatchEntryReading = (typeof REDISPATCH_ENTRY_READINGS)[number];
export const REDISPATCH_PAYLOAD_READINGS = ['original', 'current'] as const;
export type RedispatchPayloadReading = (typeof REDISPATCH_PAYLOAD_READINGS)[number];

/** The config keys that take one of a fixed list of readings, with their allowed values. */
export const CONFIG_READINGS = {
	deliveryLog: DELIVERY_LOG_READINGS,
	logOrder: LOG_ORDERS,
	redispatchEntry: REDISPATCH_ENTRY_READINGS,
	redispatchPayload: REDISPATCH_PAYLOAD_READINGS,
} as const;

/** Node's largest timer (ms): longer delays would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export const DEFAULT_CONFIG: SandboxConfig = {
	rateLimitPerMinute: 60,
	reportReadyAfterPolls: 2,
	reportReadyAfterMs: 0,
	feedVisibilityDelayMs: 0,
	deliveryMaxAttempts: 3,
	deliveryBackoffMs: 200,
	deliveryTimeoutMs: 5000,
	allowHttpWebhookUrls: false,
	didNotCompleteEnabled: false,
	deliveryLog: 'perDelivery',
	logOrder: 'newestFirst',
	redispatchEntry: 'marks',
	redispatchPayload: 'original',
	deliveryNoRetryStatuses: [],
};

export const CONFIG_KEYS = Object.keys(DEFAULT_CONFIG) as (keyof SandboxConfig)[];

export class ConfigError extends Error {}

/**
 * `base` with `patch` applied, every key checked (the control API's PATCH /config and the start
 * options alike); throws a ConfigError naming the key and what it accepts.
 */
export function patchedConfig(base: SandboxConfig, patch: Record<string, unknown>): SandboxConfig {
	const next = { ...base };
	const set = (k: keyof SandboxConfig, v: unknown) => ((next as Record<string, unknown>)[k] = v);
	for (const [k, v] of Object.entries(patch)) {
		if (!CONFIG_KEYS.includes(k as keyof SandboxConfig))
			throw new ConfigError(`unknown config key: ${k}`);
		const key = k as keyof SandboxConfig;
		if (key in CONFIG_READINGS) {
			const allowed: readonly string[] = CONFIG_READINGS[key as keyof typeof CONFIG_READINGS];
			if (typeof v !== 'string' || !allowed.includes(v))
				throw new ConfigError(`${k} must be one of ${allowed.join(', ')}`);
			set(key, v);
		} else if (key === 'deliveryNoRetryStatuses') {
			if (
				!Array.isArray(v) ||
				!v.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 100 && x <= 599)
			)
				throw new ConfigError(
					'deliveryNoRetryStatuses must be an array of HTTP status codes (integers 100-599), e.g. [404, 410]',
				);
			set(key, [...new Set(v as number[])]);
		} else if (typeof DEFAULT_CONFIG[key] === 'boolean') {
			if (typeof v !== 'boolean') throw new ConfigError(`${k} must be a boolean`);
			set(key, v);
		} else {
			if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
				throw new ConfigError(`${k} must be a non-negative number`);
			if (key === 'rateLimitPerMinute' && v < 1)
				throw new ConfigError('rateLimitPerMinute must be >= 1');
			if (key === 'deliveryMaxAttempts' && (v < 1 || !Number.isInteger(v)))
				throw new ConfigError('deliveryMaxAttempts must be an integer >= 1');
			if ((key === 'deliveryBackoffMs' || key === 'deliveryTimeoutMs') && v > MAX_TIMER_MS)
				throw new ConfigError(`${k} must be at most ${MAX_TIMER_MS} (about 24.8 days)`);
			set(key, v);
		}
	}
	return next;
}

export interface Counters {
	requestId: number;
	subscriptionId: number;
	logId: number;
	attemptId: number;
	bookmarkId: number;
	completionId: number;
	learnerId: number;
}

/** What is mirrored to the state file. */
interface Persisted {
	version: 1;
	clockOffset: number;
	counters: Counters;
	learners: Learner[];
	contents: Content[];
	attendance: Attendance[];
	feed: ReturnType<FeedLog['toJSON']>;
	apiUsers: ApiUser[];
	tokenOwners: [string, string][];
	subscriptions: Subscription[];
	logs: DeliveryLog[];
	attempts: DeliveryAttempt[];
	bookmarks: Bookmark[];
	reports: ReportRequest[];
}

const MAX_REQUEST_LOG = 20_000;
const MAX_ATTEMPTS = 20_000;

export class Store {
	config: SandboxConfig;
	clockOffset = 0;
	counters: Counters = {
		requestId: 1000,
		subscriptionId: 0,
		logId: 0,
		attemptId: 0,
		bookmarkId: 0,
		completionId: 0,
		learnerId: 0,
	};
	learners = new Map<number, Learner>();
	contents = new Map<number, Content>();
	attendance: Attendance[] = [];
	feed = new FeedLog();
	apiUsers = new Map<string, ApiUser>();
	/** every token ever issued -> its API user (to attribute requests in the log, even superseded ones) */
	tokenOwners = new Map<string, string>();
	subscriptions = new Map<number, Subscription>();
	logs = new Map<number, DeliveryLog>();
	attempts: DeliveryAttempt[] = [];
	bookmarks: Bookmark[] = [];
	reports = new Map<number, ReportRequest>();
	requestLog: RequestLogEntry[] = [];
	stats = { requests: 0, rate_limited: 0, by_status: {} as Record<string, number> };
	/** per API user: timestamps of the requests inside the current rate window (not persisted) */
	rateWindows = new Map<string, number[]>();
	/** PRNG for runtime choices (simulate defaults, fault rates) */
	rng: Prng;

	private saveTimer: NodeJS.Timeout | null = null;

	constructor(
		config: SandboxConfig,
		private readonly baseClock: () => number,
		readonly stateFile?: string,
		seed = 42,
	) {
		this.config = { ...config, deliveryNoRetryStatuses: [...config.deliveryNoRetryStatuses] };
		this.rng = prng(seed ^ 0x5eed);
	}

	now(): number {
		return this.baseClock() + this.clockOffset;
	}

	next(counter: keyof Counters): number {
		return ++this.counters[counter];
	}

	logRequest(e: RequestLogEntry) {
		this.requestLog.push(e);
		if (this.requestLog.length > MAX_REQUEST_LOG)
			this.requestLog.splice(0, this.requestLog.length - MAX_REQUEST_LOG);
	}

	addAttempt(a: DeliveryAttempt) {
		this.attempts.push(a);
		if (this.attempts.length > MAX_ATTEMPTS)
			this.attempts.splice(0, this.attempts.length - MAX_ATTEMPTS);
		this.dirty();
	}

	/** Schedules a write of the state file (debounced; flushed on close). */
	dirty() {
		if (!this.stateFile || this.saveTimer) return;
		this.saveTimer = setTimeout(() => {
			this.saveTimer = null;
			this.save();
		}, 50);
		this.saveTimer.unref();
	}

	flush() {
		if (this.saveTimer) {
			clearTimeout(this.saveTimer);
			this.saveTimer = null;
		}
		if (this.stateFile) this.save();
	}

	private save() {
		const p: Persisted = {
			version: 1,
			clockOffset: this.clockOffset,
			counters: this.counters,
			learners: [...this.learners.values()],
			contents: [...this.contents.values()],
			attendance: this.attendance,
			feed: this.feed.toJSON(),
			apiUsers: [...this.apiUsers.values()],
			tokenOwners: [...this.tokenOwners],
			subscriptions: [...this.subscriptions.values()],
			logs: [...this.logs.values()],
			attempts: this.attempts,
			bookmarks: this.bookmarks,
			reports: [...this.reports.values()].map(({ data: _data, ...r }) => r),
		};
		const tmp = `${this.stateFile}.tmp`;
		writeFileSync(tmp, JSON.stringify(p));
		renameSync(tmp, this.stateFile!);
	}

	/** Loads the state file when it exists; returns false when there was nothing to load. */
	load(): boolean {
		if (!this.stateFile || !existsSync(this.stateFile)) return false;
		const p = JSON.parse(readFileSync(this.stateFile, 'utf8')) as Persisted;
		if (p.version !== 1)
			throw new Error(`unsupported sandbox state file version in ${this.stateFile}`);
		this.clockOffset = p.clockOffset;
		this.counters = p.counters;
		this.learners = new Map(p.learners.map((l) => [l.id, l]));
		this.contents = new Map(p.contents.map((c) => [c.id, c]));
		this.attendance = p.attendance;
		this.feed = FeedLog.fromJSON(p.feed);
		this.apiUsers = new Map(p.apiUsers.map((u) => [u.username, u]));
		this.tokenOwners = new Map(p.tokenOwners);
		this.subscriptions = new Map(p.subscriptions.map((s) => [s.id, s]));
		this.logs = new Map(p.logs.map((l) => [l.id, l]));
		this.attempts = p.attempts;
		this.bookmarks = p.bookmarks;
		this.reports = new Map(p.reports.map((r) => [r.id, r]));
		return true;
	}

	/** Empties everything (before re-seeding the demo data). */
	clear(config: SandboxConfig) {
		this.config = { ...config, deliveryNoRetryStatuses: [...config.deliveryNoRetryStatuses] };
		this.clockOffset = 0;
		for (const k of Object.keys(this.counters) as (keyof Counters)[])
			this.counters[k] = k === 'requestId' ? 1000 : 0;
		this.learners.clear();
		this.contents.clear();
		this.attendance = [];
		this.feed = new FeedLog();
		this.apiUsers.clear();
		this.tokenOwners.clear();
		this.subscriptions.clear();
		this.logs.clear();
		this.attempts = [];
		this.bookmarks = [];
		this.reports.clear();
		this.requestLog = [];
		this.stats = { requests: 0, rate_limited: 0, by_status: {} };
		this.rateWindows.clear();
	}
}
