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
}

export const DELIVERY_LOG_READINGS = ['perDelivery', 'perAttempt'] as const;
export type DeliveryLogReading = (typeof DELIVERY_LOG_READINGS)[number];

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
};

export const CONFIG_KEYS = Object.keys(DEFAULT_CONFIG) as (keyof SandboxConfig)[];

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
		this.config = { ...config };
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
		this.config = { ...config };
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
