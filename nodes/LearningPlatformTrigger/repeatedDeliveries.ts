// Recognises a delivery the platform sends again with identical bytes (a retry after a time-out
// or an error answer) in this process, so it does not start a second execution; a repeat is
// dropped only once the earlier attempt is known to have started one. docs/design.md.
import { createHash } from 'node:crypto';

import { clock, type Clock } from '../LearningPlatform/transport/clock';

/** How long an accepted delivery is remembered. */
export const REPEAT_WINDOW_MS = 15 * 60_000;
/** Bounds the memory under a flood of distinct deliveries; the oldest are forgotten first. */
export const MAX_REMEMBERED = 10_000;
/** How long a repeat waits for n8n to answer the earlier attempt. */
export const WAIT_FOR_EARLIER_ANSWER_MS = 60_000;
const ANSWER_CHECK_INTERVAL_MS = 20;

/** What the node can read of n8n's HTTP response (an `http.ServerResponse`) to an attempt. */
export interface AttemptResponse {
	readonly writableEnded: boolean;
	readonly statusCode: number;
}

interface RememberedAttempt {
	receivedAt: number;
	/** Dropped once the answer is known, so that no socket is kept alive by this memory. */
	response?: AttemptResponse;
	startedExecution?: boolean;
}

/**
 * Identifies a delivery by its bytes and by where it was sent: the same event delivered to the
 * production and to the test URL (two subscriptions) are two deliveries.
 */
export function deliveryKey(destination: string[], rawBody: Buffer): string {
	const hash = createHash('sha256');
	for (const part of destination) hash.update(part).update('\0');
	return hash.update(rawBody).digest('hex');
}

/** True when n8n answered the attempt with 2xx; undefined while it has not answered. */
function answerOf(attempt: RememberedAttempt): boolean | undefined {
	if (attempt.startedExecution !== undefined) return attempt.startedExecution;
	const response = attempt.response;
	if (!response?.writableEnded) return undefined;
	attempt.startedExecution = response.statusCode >= 200 && response.statusCode < 300;
	attempt.response = undefined;
	return attempt.startedExecution;
}

/**
 * The memory of one process. Time comes from `time()` (the process clock unless a test passes
 * another), so the 60 s wait and the 15 min memory can be tested without waiting.
 */
export class RepeatedDeliveries {
	private readonly remembered = new Map<string, RememberedAttempt>();

	constructor(private readonly time: () => Clock = clock) {}

	get size(): number {
		return this.remembered.size;
	}

	/**
	 * Decides whether the delivery identified by `key` repeats one that already started an
	 * execution in this process. When it does not, this attempt is remembered (with its response,
	 * to learn n8n's answer later) and the caller starts an execution.
	 */
	async isRepeated(key: string, response: AttemptResponse): Promise<boolean> {
		// Deleted before set so the key moves to the end of the map, which forgetExpired reads as
		// the newest.
		const remember = (receivedAt: number): false => {
			this.remembered.delete(key);
			this.remembered.set(key, { receivedAt, response });
			return false;
		};
		for (;;) {
			const now = this.time().now();
			this.forgetExpired(now);
			const earlier = this.remembered.get(key);
			if (earlier === undefined || now - earlier.receivedAt >= REPEAT_WINDOW_MS)
				return remember(now);
			const startedExecution = await this.waitForAnswer(earlier);
			if (startedExecution === true) return true;
			// Another repeat may have taken over while this one waited: judge against that one.
			if (this.remembered.get(key) !== earlier) continue;
			return remember(this.time().now());
		}
	}

	private forgetExpired(now: number): void {
		for (const [key, attempt] of this.remembered) {
			if (now - attempt.receivedAt < REPEAT_WINDOW_MS && this.remembered.size <= MAX_REMEMBERED)
				break;
			this.remembered.delete(key);
		}
	}

	private async waitForAnswer(attempt: RememberedAttempt): Promise<boolean | undefined> {
		const time = this.time();
		const deadline = time.now() + WAIT_FOR_EARLIER_ANSWER_MS;
		for (;;) {
			const answer = answerOf(attempt);
			if (answer !== undefined || time.now() >= deadline) return answer;
			await time.sleep(ANSWER_CHECK_INTERVAL_MS);
		}
	}
}

const processMemory = new RepeatedDeliveries();

/** {@link RepeatedDeliveries.isRepeated} on this process's memory. */
export async function isRepeatedDelivery(key: string, response: AttemptResponse): Promise<boolean> {
	return await processMemory.isRepeated(key, response);
}
