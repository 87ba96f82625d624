// Delivery faults of the control API (sandbox/faults.ts): the receiver gets and processes the
// whole delivery, but the sandbox does not take its answer, so the attempt counts as failed and
// the platform retries the identical bytes. Checked over HTTP against a receiver of this file
// that records each request and when it finished answering it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { SandboxControlError, type DeliveryAttempt } from '../../sandbox/client';
import { Api, waitFor } from './helpers';

interface Handled {
	path: string;
	body: string;
	receivedAt: number;
	/** set when the whole answer was written (not when the sender went away first) */
	answeredAt?: number;
	aborted: boolean;
}

/** Answers 200 `{"processed":n}` after `answerAfterMs`; records every request it handled. */
async function processingReceiver(answerAfterMs = 0) {
	const handled: Handled[] = [];
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const entry: Handled = {
				path: req.url ?? '/',
				body: Buffer.concat(chunks).toString('utf8'),
				receivedAt: Date.now(),
				aborted: false,
			};
			handled.push(entry);
			res.on('finish', () => (entry.answeredAt = Date.now()));
			res.on('close', () => {
				if (entry.answeredAt === undefined) entry.aborted = true;
			});
			setTimeout(() => {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ processed: handled.length }));
			}, answerAfterMs);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		handled,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

const EVENT = 'Events\\Courses\\Completion_created';
const BACKOFF_MS = 50;

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await startSandbox({
		allowHttpWebhookUrls: true,
		rateLimitPerMinute: 10_000,
		deliveryBackoffMs: BACKOFF_MS,
		deliveryMaxAttempts: 3,
	});
});
afterAll(() => sb.close());
afterEach(() => sb.control.clearFaults());

async function subscribe(url: string): Promise<{ api: Api; id: number }> {
	const api = await Api.login(sb);
	const created = await api.send('POST', api.r.webhook, { event: EVENT, url });
	expect(created.status).toBe(201);
	return { api, id: created.json.id };
}

let nextLearner = 10;
/**
 * Fires `n` completions (learners not used before) and waits until each one's delivery to the
 * subscription is answered 200 and nothing is pending; returns the attempts of these deliveries.
 */
async function fire(n: number, subscriptionId: number): Promise<DeliveryAttempt[]> {
	const before = new Set((await sb.control.deliveries({ subscriptionId })).map((a) => a.log_id));
	for (let i = 0; i < n; i++)
		await sb.control.simulateCompletion({ userId: nextLearner++, contentId: 105 });
	return waitFor(
		async () => {
			const attempts = (await sb.control.deliveries({ subscriptionId })).filter(
				(a) => !before.has(a.log_id),
			);
			const settled = (await sb.control.pendingDeliveries()).pending === 0;
			const answered = new Set(attempts.filter((a) => a.status_code === 200).map((a) => a.log_id));
			return settled && answered.size === n && attempts;
		},
		10_000,
		`${n} deliveries answered 200`,
	);
}

const byLog = (attempts: DeliveryAttempt[]) => {
	const map = new Map<number, DeliveryAttempt[]>();
	for (const a of attempts) map.set(a.log_id!, [...(map.get(a.log_id!) ?? []), a]);
	for (const list of map.values()) list.sort((x, y) => x.attempt - y.attempt);
	return [...map.values()];
};

describe('delivery faults: the receiver processed the delivery, the platform counts it as failed', () => {
	it('dropAnswer every 2nd delivery: its first attempt is received and answered, recorded as failed, and retried with the same bytes', async () => {
		const rx = await processingReceiver();
		try {
			const { api, id } = await subscribe(`${rx.url}/drop`);
			const set = await sb.control.dropDeliveryAnswers({ every: 2 });
			expect(set.faults).toEqual([expect.objectContaining({ kind: 'dropAnswer', every: 2 })]);

			const deliveries = byLog(await fire(6, id));
			expect(deliveries).toHaveLength(6);
			const faulted = deliveries.filter((d) => d[0].status_code === null);
			const clean = deliveries.filter((d) => d[0].status_code === 200);
			// every 2nd of 6 deliveries: 3 faulted, each retried once; the others took one attempt
			expect(faulted).toHaveLength(3);
			expect(clean.map((d) => d.length)).toEqual([1, 1, 1]);
			for (const [first, retry, ...more] of faulted) {
				expect(more).toEqual([]);
				expect(first.error).toBe('answer dropped (fault): the receiver answered 200');
				expect(first.response).toBeNull();
				expect(retry).toMatchObject({ attempt: 2, status_code: 200, error: null });
				expect(retry.body).toBe(first.body);
				expect(retry.headers['x-signature'] ?? null).toBe(first.headers['x-signature'] ?? null);
				// the receiver got and answered both attempts, byte for byte the same
				const got = rx.handled.filter((h) => h.body === first.body);
				expect(got).toHaveLength(2);
				expect(got.every((h) => h.answeredAt !== undefined && !h.aborted)).toBe(true);
				// the retry waited for the back-off after the failed first attempt
				expect(Date.parse(retry.sent_at) - Date.parse(first.sent_at)).toBeGreaterThanOrEqual(
					BACKOFF_MS,
				);
			}
			expect(rx.handled).toHaveLength(9);
			// the platform's own log: two tries, success after the retry
			const logs = (await api.get(`${api.r.webhook}/${id}/logs`)).json.data as Array<{
				id: number;
				tries: number;
				success: boolean;
			}>;
			const faultedLogIds = new Set(faulted.map((d) => d[0].log_id));
			expect(logs.filter((l) => faultedLogIds.has(l.id)).map((l) => [l.tries, l.success])).toEqual([
				[2, true],
				[2, true],
				[2, true],
			]);
			// the rule fired three times and stays active (no count)
			expect((await sb.control.getFaults()).faults).toEqual([
				expect.objectContaining({ kind: 'dropAnswer', hits: 3 }),
			]);
		} finally {
			await rx.close();
		}
	});

	it('answerTimeout: the sandbox stops waiting and retries while the receiver still processes and answers the first attempt', async () => {
		const rx = await processingReceiver(1500);
		try {
			const { id } = await subscribe(`${rx.url}/slow`);
			await sb.control.dropDeliveryAnswers({ every: 1, kind: 'answerTimeout', timeoutMs: 100 });
			const [[first, retry, ...more]] = byLog(await fire(1, id));
			expect(more).toEqual([]);
			expect(first).toMatchObject({
				attempt: 1,
				status_code: null,
				error: 'timed out after 100 ms (fault: answer not awaited)',
			});
			expect(retry).toMatchObject({ attempt: 2, status_code: 200, body: first.body });
			// the first request was not aborted: the receiver finished it and wrote its whole answer
			await waitFor(async () => rx.handled.every((h) => h.answeredAt !== undefined), 5000);
			expect(rx.handled.map((h) => [h.body === first.body, h.aborted])).toEqual([
				[true, false],
				[true, false],
			]);
			// the retry reached the receiver before it had answered the first attempt
			expect(rx.handled[1].receivedAt).toBeLessThan(rx.handled[0].answeredAt!);
		} finally {
			await rx.close();
		}
	});

	it('applies to the given attempt only, for `count` deliveries, on matching URLs; leaves API requests alone', async () => {
		const rx = await processingReceiver();
		try {
			const { api, id } = await subscribe(`${rx.url}/only-this`);
			const other = await subscribe(`${rx.url}/other`);
			await sb.control.dropDeliveryAnswers({ every: 1, count: 2, pathPattern: '^/only-this$' });
			// an API request is not a delivery: no request fault fires
			expect((await api.get(api.r.webhook)).status).toBe(200);
			const deliveries = byLog(await fire(3, id));
			expect(deliveries.map((d) => d.map((a) => a.status_code))).toEqual([
				[null, 200],
				[null, 200],
				[200],
			]);
			// the other subscription's deliveries of the same events were not touched
			const others = byLog(await sb.control.deliveries({ subscriptionId: other.id }));
			expect(others.map((d) => d.map((a) => a.status_code))).toEqual([[200], [200], [200]]);
			// count used up: the rule is gone
			expect((await sb.control.getFaults()).faults).toEqual([]);

			// a rule for the second attempt leaves first attempts alone
			await sb.control.setFaults({ kind: 'dropAnswer', attempt: 2 });
			const [single] = byLog(await fire(1, id));
			expect(single.map((a) => a.status_code)).toEqual([200]);
		} finally {
			await rx.close();
		}
	});

	it('refuses invalid delivery fault specs with 400', async () => {
		for (const spec of [
			{ kind: 'dropAnswer', every: 0 },
			{ kind: 'answerTimeout', timeoutMs: -1 },
			{ kind: 'dropAnswer', attempt: 1.5 },
			{ kind: 'dropAnswer', rate: 0.5 },
			{ kind: 'http500', every: 2 },
		]) {
			const error = await sb.control
				.setFaults(spec as never)
				.then(() => undefined)
				.catch((e: unknown) => e);
			expect(error).toBeInstanceOf(SandboxControlError);
			expect((error as SandboxControlError).status).toBe(400);
		}
		expect((await sb.control.getFaults()).faults).toEqual([]);
	});
});
