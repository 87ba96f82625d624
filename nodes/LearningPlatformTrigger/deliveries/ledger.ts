// Which deliveries already started an execution, known to every n8n process that serves the
// webhook: each process remembers its own attempts (and waits for n8n's answer to one still in
// flight), and all processes share what started an execution through the workflow's static data,
// which n8n loads with every webhook request and saves after the execution exists. The save
// replaces the whole field (last writer wins), so every write carries all a process knows, and
// writes still pending get what it learns later. A process that loads its own save, which may
// have overwritten a newer one of another process, waits briefly for that process's next save
// before it calls a delivery new. The stored text: ledgerText.ts. docs/design.md, "Exactly once".
import { randomBytes } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';

import { clock, type Clock } from '../../shared/transport';
import { readField, writeField } from '../staticData';
import { entryText, groupsText, ledgerText, parseLedgerText } from './ledgerText';

/**
 * How long a delivery that started an execution is remembered: longer than recovery reads the
 * platform's log back (three days), so a redispatch of any logged failure of it is recognised.
 */
export const LEDGER_WINDOW_MS = 74 * 60 * 60_000;
/** Most deliveries kept in the workflow's static data; the oldest go first. */
export const MAX_SHARED = 5_000;
/** Most deliveries one process remembers. */
export const MAX_REMEMBERED = 10_000;
/**
 * How long a repeat waits for n8n to answer the earlier attempt in this process. n8n answers every
 * attempt in the end (2xx once the execution exists, 500 if it could not start one); a busy n8n
 * took over a minute, and a repeat admitted before the answer ran a second time. The platform has
 * given up on the repeat's connection by then: waiting holds a request, it delays nothing.
 */
export const WAIT_FOR_EARLIER_ANSWER_MS = 10 * 60_000;
/** How often a wait for an answer that comes with no event looks again, at the most. */
const ANSWER_CHECK_MAX_INTERVAL_MS = 250;
/** A request's static data is saved by n8n shortly after `webhook()`; merged into until then. */
const PENDING_SAVE_MS = 60_000;
/** How often a wait with no event to wait for looks again. */
const CHECK_INTERVAL_MS = 20;
/**
 * How long a delivery unknown here waits for a save of another process made after it arrived,
 * when the save it loaded is this process's own (and so may have overwritten the other's newer
 * one): a platform retry of a delivery that started an execution there is then recognised.
 */
export const WAIT_FOR_OTHER_SAVE_MS = 3_000;
/** Another process counts as serving the webhook while a save of it was seen this recently. */
export const OTHERS_ACTIVE_MS = 5 * 60_000;

/** What the node can read of n8n's HTTP response (an `http.ServerResponse`) to an attempt. */
export interface AttemptResponse {
	readonly writableEnded: boolean;
	readonly statusCode: number;
	/** an `http.ServerResponse` emits 'finish' once the answer is sent, 'close' when it is done */
	once?(event: 'finish' | 'close', listener: () => void): unknown;
}

interface Attempt {
	receivedAt: number;
	/** dropped once the answer is known, so no socket is kept alive by this memory */
	response?: AttemptResponse;
	/** made by the first repeat that waits for the answer (`answerSent`) */
	answered?: Promise<void>;
	startedExecution?: boolean;
}

/** The memory of one n8n process. Time comes from `time()`, so tests need not wait. */
export class DeliveryLedger {
	private readonly attempts = new Map<string, Attempt>();
	/** what this process knows started an execution (its own 2xx answers and what it learnt) */
	private readonly started = new Map<string, number>();
	/** `started` as the shared text; undefined when `started` changed since */
	private startedText?: string;
	/** static data of requests not yet saved by n8n, with the entry of their own delivery */
	private readonly pending = new Map<IDataObject, { registeredAt: number; own: string }>();
	/** the shared field as last taken in, so an unchanged one is not read again */
	private lastLearnt: unknown;
	/** the tag of the process that wrote `lastLearnt` */
	private lastLearntWriter?: string;
	/** this process in the texts it writes */
	private readonly tag = randomBytes(6).toString('base64url');
	private readonly createdAt: number;
	/** the newest save of another process taken in: when it was written (its clock) and seen */
	private otherSave?: { writtenAt: number; seenAt: number };

	constructor(private readonly time: () => Clock = clock) {
		this.createdAt = time().now();
	}

	get size(): number {
		return this.attempts.size;
	}

	/** Takes in what other processes stored, and passes on to pending saves what is known. */
	learn(staticData: IDataObject): void {
		const now = this.time().now();
		const field = readField(staticData, 'startedDeliveries');
		if (field !== this.lastLearnt || typeof field !== 'string') {
			this.lastLearnt = field;
			const { writer, deliveries } = parseLedgerText(field);
			this.lastLearntWriter = writer?.tag;
			// a save of this process before a restart carries another tag, and is older than this ledger
			if (writer && writer.tag !== this.tag && writer.at >= this.createdAt) {
				const writtenAt = Math.max(writer.at, this.otherSave?.writtenAt ?? -Infinity);
				this.otherSave = { writtenAt, seenAt: now };
			}
			let learnt = false;
			for (const [key, seconds] of deliveries) {
				const at = seconds * 1000;
				if (!Number.isFinite(at) || now - at >= LEDGER_WINDOW_MS) continue;
				const known = this.attempts.get(key);
				if (known && answerOf(known) !== false) continue;
				this.attempts.set(key, { receivedAt: at, startedExecution: true });
				learnt = this.markStarted(key, seconds) || learnt;
			}
			if (learnt) this.flushPending(now);
		}
		this.forgetExpired(now);
	}

	/**
	 * The one call per delivery: takes in what `staticData` (as n8n loaded it for this request)
	 * holds, and says whether `key` repeats a delivery that already started an execution. A new
	 * one is recorded into `staticData`, which n8n saves once the execution exists.
	 */
	async admit(
		staticData: IDataObject,
		key: string,
		response: AttemptResponse,
	): Promise<'new' | 'repeat'> {
		const arrivedAt = this.time().now();
		this.learn(staticData);
		if (!this.attempts.has(key) && this.mayHideOtherSaves(arrivedAt))
			await this.waitForOtherSave(key, arrivedAt);
		if (await this.isRepeated(key, response)) return 'repeat';
		this.record(staticData, key, response);
		return 'new';
	}

	/**
	 * Whether the delivery `key` repeats one that already started an execution (here or, as
	 * learnt, elsewhere). When it does not, this attempt is remembered with its response, to learn
	 * n8n's answer later, and `admit` records it.
	 */
	private async isRepeated(key: string, response: AttemptResponse): Promise<boolean> {
		const remember = (receivedAt: number): false => {
			// deleted first so the key moves to the end, which forgetExpired reads as the newest
			this.attempts.delete(key);
			this.attempts.set(key, { receivedAt, response });
			return false;
		};
		for (;;) {
			const now = this.time().now();
			this.forgetExpired(now);
			const earlier = this.attempts.get(key);
			if (earlier === undefined || now - earlier.receivedAt >= LEDGER_WINDOW_MS)
				return remember(now);
			const startedExecution = await this.waitForAnswer(key, earlier);
			if (startedExecution === true) return true;
			// another repeat may have taken over while this one waited: judge against that one
			if (this.attempts.get(key) !== earlier) continue;
			return remember(this.time().now());
		}
	}

	/**
	 * Writes into this request's static data every delivery known to have started an execution,
	 * plus `key`, whose execution n8n creates before it saves. Until n8n has saved it, the static
	 * data also receives what this process learns meanwhile, and `key` reaches the other saves
	 * still pending once n8n has answered (after its save) with 2xx.
	 */
	private record(staticData: IDataObject, key: string, response: AttemptResponse): void {
		const now = this.time().now();
		const own = entryText(key, Math.floor(now / 1000));
		this.pending.set(staticData, { registeredAt: now, own });
		this.write(staticData, now, own);
		response.once?.('finish', () => {
			this.pending.delete(staticData);
			const attempt = this.attempts.get(key);
			if (attempt && answerOf(attempt) === true) this.markStarted(key, Math.floor(now / 1000));
			this.flushPending(this.time().now());
		});
	}

	/**
	 * Whether the save just taken in (`learn`) is this process's own while another process
	 * serves the webhook too: that save may have overwritten a newer one of the other process
	 * (whole-field saves), whose deliveries this process then does not know yet.
	 */
	private mayHideOtherSaves(now: number): boolean {
		return (
			this.lastLearntWriter === this.tag &&
			this.otherSave !== undefined &&
			now - this.otherSave.seenAt < OTHERS_ACTIVE_MS
		);
	}

	/**
	 * Until this process has taken in a save another process wrote after `since` (it holds all that
	 * process knew then, so a delivery it started before `since` is learnt), `key` is learnt, or the
	 * wait is over. It looks every CHECK_INTERVAL_MS: what it waits for is taken in by other
	 * requests' `learn`, which has no event of its own.
	 */
	private async waitForOtherSave(key: string, since: number): Promise<void> {
		const time = this.time();
		const deadline = since + WAIT_FOR_OTHER_SAVE_MS;
		while (
			!this.attempts.has(key) &&
			(this.otherSave?.writtenAt ?? -Infinity) <= since &&
			time.now() < deadline
		)
			await time.sleep(CHECK_INTERVAL_MS);
	}

	/** Adds `key` to what is shared; false when it was known already. */
	private markStarted(key: string, seconds: number): boolean {
		if ((this.started.get(key) ?? -Infinity) >= seconds) return false;
		this.started.delete(key);
		this.started.set(key, seconds);
		this.startedText = undefined;
		return true;
	}

	private flushPending(now: number): void {
		for (const [pendingData, { registeredAt, own }] of this.pending) {
			if (now - registeredAt >= PENDING_SAVE_MS) this.pending.delete(pendingData);
			else this.write(pendingData, now, own);
		}
	}

	private write(staticData: IDataObject, now: number, own: string): void {
		const shared = this.sharedText(now);
		writeField(
			staticData,
			'startedDeliveries',
			ledgerText({ tag: this.tag, at: now }, shared, own),
		);
	}

	/**
	 * `started` within the window, newest kept. Over the cap it is cut to 90 % of it at once, so
	 * the sort happens once every few hundred deliveries, not with each one.
	 */
	private sharedText(now: number): string {
		if (this.startedText !== undefined) return this.startedText;
		const oldest = Math.floor((now - LEDGER_WINDOW_MS) / 1000);
		for (const [key, seconds] of this.started) if (seconds <= oldest) this.started.delete(key);
		if (this.started.size >= MAX_SHARED) {
			const newest = [...this.started]
				.sort((a, b) => b[1] - a[1])
				.slice(0, Math.floor(MAX_SHARED * 0.9));
			this.started.clear();
			for (const [key, seconds] of newest.reverse()) this.started.set(key, seconds);
		}
		this.startedText = groupsText(this.started);
		return this.startedText;
	}

	private forgetExpired(now: number): void {
		for (const [key, attempt] of this.attempts) {
			if (now - attempt.receivedAt < LEDGER_WINDOW_MS && this.attempts.size <= MAX_REMEMBERED)
				break;
			this.attempts.delete(key);
		}
	}

	/**
	 * n8n's answer to the earlier `attempt` of `key` (as `answerOf`), waited for up to
	 * WAIT_FOR_EARLIER_ANSWER_MS: until the response's 'finish' (or 'close') event.
	 */
	private async waitForAnswer(key: string, attempt: Attempt): Promise<boolean | undefined> {
		const time = this.time();
		const deadline = time.now() + WAIT_FOR_EARLIER_ANSWER_MS;
		if (answerOf(attempt) === undefined && attempt.response) {
			attempt.answered ??= answerSent(attempt.response);
			// ended once answered, so no timer outlives the wait
			const deadlineWait = new AbortController();
			const deadlinePassed = time.sleep(deadline - time.now(), deadlineWait.signal);
			await Promise.race([attempt.answered, deadlinePassed.catch(() => undefined)]);
			deadlineWait.abort();
		}
		// n8n still answers a connection the platform closed first (it timed out), with no event;
		// the looks space out, as many repeats may wait at once on a busy n8n
		for (
			let interval = CHECK_INTERVAL_MS;
			answerOf(attempt) === undefined && time.now() < deadline;
			interval = Math.min(interval * 2, ANSWER_CHECK_MAX_INTERVAL_MS)
		)
			await time.sleep(interval);
		const answer = answerOf(attempt);
		if (answer === true) this.markStarted(key, Math.floor(attempt.receivedAt / 1000));
		return answer;
	}
}

/** Resolves once the answer was sent ('finish') or the connection closed, whichever comes first. */
function answerSent(response: AttemptResponse): Promise<void> {
	return new Promise((resolve) => {
		response.once?.('finish', () => resolve());
		response.once?.('close', () => resolve());
	});
}

/** True when n8n answered the attempt with 2xx; undefined while it has not answered. */
function answerOf(attempt: Attempt): boolean | undefined {
	if (attempt.startedExecution !== undefined) return attempt.startedExecution;
	const response = attempt.response;
	if (!response?.writableEnded) return undefined;
	attempt.startedExecution = response.statusCode >= 200 && response.statusCode < 300;
	attempt.response = undefined;
	return attempt.startedExecution;
}
