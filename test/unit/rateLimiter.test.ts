/**
 * The client-side pacing on a fake clock: the sliding window, the limit learnt from the answers,
 * others' requests seen in X-RateLimit-Remaining, 429 + Retry-After, cancellation. Minutes of
 * waiting take no real time. (test/transport/pacing.test.ts checks the same pacing once against
 * the sandbox's real window.)
 */
import { FakeClock } from '../support/fakeClock';
import {
	EDGE_MARGIN_MS,
	RateLimiter,
	WINDOW_MS,
	type RateTicket,
} from '../../nodes/shared/transport/rateLimiter';

let time: FakeClock;
let limiter: RateLimiter;
let random: jest.SpyInstance;

beforeEach(() => {
	time = new FakeClock(0);
	limiter = new RateLimiter(() => time);
	// no jitter: every wait is exact
	random = jest.spyOn(Math, 'random').mockReturnValue(0);
});
afterEach(() => {
	random.mockRestore();
	limiter.reset();
});

const ok = (limit: number, remaining?: number) => ({
	status: 200,
	headers: {
		'x-ratelimit-limit': String(limit),
		...(remaining !== undefined ? { 'x-ratelimit-remaining': String(remaining) } : {}),
	},
});

/** Takes `count` slots one after another, answering each at once; returns their start times. */
async function burst(key: string, count: number, limit: number): Promise<number[]> {
	const starts: number[] = [];
	for (let i = 0; i < count; i++) {
		const ticket = await limiter.acquireSlot(key);
		starts.push(time.now());
		limiter.recordAnswer(ticket, ok(limit));
	}
	return starts;
}

test('a burst of `limit` goes at once; the next request waits for the oldest to leave the window, margin included', async () => {
	const starts = await burst('user-a', 7, 5);
	expect(starts.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
	expect(starts[5]).toBe(WINDOW_MS + EDGE_MARGIN_MS);
	expect(starts[6]).toBe(WINDOW_MS + EDGE_MARGIN_MS);
});

test('the margin holds when the wait is slept in chunks that end between the edge and the margin', async () => {
	await burst('user-a', 5, 5);
	// the sixth request comes when 5.1 s are left: one 5 s chunk ends 150 ms past the edge
	time.at = WINDOW_MS + EDGE_MARGIN_MS - 5_100;
	const ticket = await limiter.acquireSlot('user-a');
	expect(time.now()).toBeGreaterThanOrEqual(WINDOW_MS + EDGE_MARGIN_MS);
	limiter.recordAnswer(ticket, ok(5));
});

test('until the first answer teaches the limit, only one request is in flight', async () => {
	const first = await limiter.acquireSlot('user-b');
	let secondStarted = false;
	const second = limiter.acquireSlot('user-b').then((ticket) => {
		secondStarted = true;
		return ticket;
	});
	await Promise.resolve();
	await Promise.resolve();
	expect(secondStarted).toBe(false);
	// the server's limit is 2: the answer lets exactly one more go in this window
	limiter.recordAnswer(first, ok(2));
	const secondTicket = await second;
	limiter.recordAnswer(secondTicket, ok(2));
	expect(time.now()).toBe(0);
	await limiter.acquireSlot('user-b');
	expect(time.now()).toBe(WINDOW_MS + EDGE_MARGIN_MS);
});

test("others' requests seen in X-RateLimit-Remaining count against the window", async () => {
	const first = await limiter.acquireSlot('user-c');
	// limit 10, 2 left after our one request: someone else made 7
	limiter.recordAnswer(first, ok(10, 2));
	const starts: number[] = [];
	for (let i = 0; i < 3; i++) {
		const ticket: RateTicket = await limiter.acquireSlot('user-c');
		starts.push(time.now());
		limiter.recordAnswer(ticket, ok(10));
	}
	// two free slots go at once; the third holds back (the others' timing is unknown)
	expect(starts.slice(0, 2)).toEqual([0, 0]);
	expect(starts[2]).toBeGreaterThan(0);
});

test('a 429 blocks the whole bucket until Retry-After (plus the margin)', async () => {
	const first = await limiter.acquireSlot('user-d');
	limiter.recordAnswer(first, ok(60));
	const refused = await limiter.acquireSlot('user-d');
	const blockedFor = limiter.recordAnswer(refused, {
		status: 429,
		headers: { 'retry-after': '7', 'x-ratelimit-limit': '60' },
	});
	expect(blockedFor).toBe(7_000 + EDGE_MARGIN_MS);
	await limiter.acquireSlot('user-d');
	expect(time.now()).toBe(7_000 + EDGE_MARGIN_MS);
});

test('buckets are per API user', async () => {
	await burst('user-e', 3, 3);
	await limiter.acquireSlot('user-f');
	expect(time.now()).toBe(0);
});

test('a cancelled execution stops waiting', async () => {
	await burst('user-g', 2, 2);
	let checks = 0;
	await expect(limiter.acquireSlot('user-g', { isCancelled: () => ++checks >= 2 })).rejects.toThrow(
		'The execution was cancelled while waiting for the rate limit',
	);
	// it gave up after two chunks, long before the window
	expect(time.now()).toBeLessThan(WINDOW_MS);
});

describe("keyUse: the key as this process sees it, for recovery's share", () => {
	test('nothing known: the default limit, nothing used', () => {
		expect(limiter.keyUse('user-k')).toEqual({ limit: 60, ours: 0, others: 0 });
	});

	test("others' requests from the last Remaining are held a whole window after that answer, then no longer known", async () => {
		const ticket = await limiter.acquireSlot('user-k');
		// 60 allowed, 45 left after ours: 14 are others'
		limiter.recordAnswer(ticket, ok(60, 45));
		expect(limiter.keyUse('user-k')).toEqual({ limit: 60, ours: 1, others: 14 });
		time.at = WINDOW_MS - 1;
		expect(limiter.keyUse('user-k').others).toBe(14);
		time.at = WINDOW_MS;
		expect(limiter.keyUse('user-k').others).toBe(0);
	});

	test('a 429 makes the whole key used while it blocks', async () => {
		const ticket = await limiter.acquireSlot('user-k');
		limiter.recordAnswer(ticket, {
			status: 429,
			headers: { 'x-ratelimit-limit': '60', 'retry-after': '10' },
		});
		expect(limiter.keyUse('user-k')).toEqual({ limit: 60, ours: 0, others: 60 });
	});
});
