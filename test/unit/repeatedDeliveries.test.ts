/**
 * The webhook trigger's memory of deliveries, on a fake clock: a repeat waits for n8n's answer
 * to the earlier attempt (up to 60 s), is dropped only when that attempt started an execution,
 * and the memory forgets after 15 minutes or beyond 10,000 deliveries. No real waiting.
 */
import { FakeClock } from '../support/fakeClock';
import {
	MAX_REMEMBERED,
	REPEAT_WINDOW_MS,
	RepeatedDeliveries,
	WAIT_FOR_EARLIER_ANSWER_MS,
	type AttemptResponse,
} from '../../nodes/LearningPlatformTrigger/repeatedDeliveries';

class Response implements AttemptResponse {
	writableEnded = false;
	statusCode = 200;
	answer(statusCode: number) {
		this.statusCode = statusCode;
		this.writableEnded = true;
	}
}

let time: FakeClock;
let memory: RepeatedDeliveries;
beforeEach(() => {
	time = new FakeClock();
	memory = new RepeatedDeliveries(() => time);
});

test('a repeat of a delivery that started an execution (2xx) is dropped; other deliveries are not', async () => {
	const first = new Response();
	expect(await memory.isRepeated('a', first)).toBe(false);
	first.answer(200);
	expect(await memory.isRepeated('a', new Response())).toBe(true);
	expect(await memory.isRepeated('b', new Response())).toBe(false);
});

test('a repeat of a delivery n8n refused (500) runs: it becomes the remembered attempt', async () => {
	const first = new Response();
	await memory.isRepeated('a', first);
	first.answer(500);
	const second = new Response();
	expect(await memory.isRepeated('a', second)).toBe(false);
	second.answer(204);
	expect(await memory.isRepeated('a', new Response())).toBe(true);
});

test('a repeat waits for the earlier answer: dropped when it comes within the wait', async () => {
	const first = new Response();
	await memory.isRepeated('a', first);
	const started = time.now();
	time.onSleep = (now) => {
		if (now - started >= 1_500) first.answer(200);
	};
	expect(await memory.isRepeated('a', new Response())).toBe(true);
	expect(time.now() - started).toBeGreaterThanOrEqual(1_500);
	expect(time.now() - started).toBeLessThan(2_000);
});

test('still unanswered after the wait: treated as a new delivery (a duplicate beats a lost event)', async () => {
	await memory.isRepeated('a', new Response());
	const started = time.now();
	expect(await memory.isRepeated('a', new Response())).toBe(false);
	expect(time.now() - started).toBeGreaterThanOrEqual(WAIT_FOR_EARLIER_ANSWER_MS);
});

test('forgotten after 15 minutes', async () => {
	const first = new Response();
	await memory.isRepeated('a', first);
	first.answer(200);
	time.at += REPEAT_WINDOW_MS - 1;
	expect(await memory.isRepeated('a', new Response())).toBe(true);
	time.at += 1;
	expect(await memory.isRepeated('a', new Response())).toBe(false);
});

test('the memory is capped: the oldest deliveries are forgotten first', async () => {
	for (let i = 0; i <= MAX_REMEMBERED + 5; i++) {
		const response = new Response();
		response.answer(200);
		await memory.isRepeated(`key-${i}`, response);
	}
	expect(memory.size).toBeLessThanOrEqual(MAX_REMEMBERED + 1);
	// the oldest went; a recent one is still known
	expect(await memory.isRepeated('key-0', new Response())).toBe(false);
	const recent = `key-${MAX_REMEMBERED}`;
	expect(await memory.isRepeated(recent, new Response())).toBe(true);
});
