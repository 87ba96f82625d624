/**
 * The webhook trigger's ledger of deliveries, on a fake clock. In one process: a repeat waits for
 * n8n's answer to the earlier attempt (up to 60 s) and is dropped only when that attempt started
 * an execution. Across processes: what started an execution travels through the workflow's static
 * data, which n8n saves whole (last writer wins); the tests play that database.
 */
import type { IDataObject } from 'n8n-workflow';

import { FakeClock } from '../support/fakeClock';
import type { Clock } from '../../nodes/shared/transport/clock';
import {
	DeliveryLedger,
	LEDGER_WINDOW_MS,
	MAX_REMEMBERED,
	MAX_SHARED,
	OTHERS_ACTIVE_MS,
	WAIT_FOR_EARLIER_ANSWER_MS,
	WAIT_FOR_OTHER_SAVE_MS,
	type AttemptResponse,
} from '../../nodes/LearningPlatformTrigger/deliveries/ledger';
import {
	groupsText,
	sharedDeliveries,
} from '../../nodes/LearningPlatformTrigger/deliveries/ledgerText';
import { ProcessLedgers } from '../../nodes/LearningPlatformTrigger/deliveries/processLedgers';
import { occurrenceKey } from '../../nodes/LearningPlatformTrigger/deliveries/repeatKey';

const LEDGER_FIELD = 'startedDeliveries';

/** n8n's response to an attempt, as an http.ServerResponse emits its events. */
class Response implements AttemptResponse {
	writableEnded = false;
	statusCode = 200;
	private closed = false;
	private readonly listeners = new Map<string, Array<() => void>>();
	once(event: 'finish' | 'close', listener: () => void) {
		this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
	}
	/** n8n answers: 'finish' once the answer is sent, none when the connection closed before */
	answer(statusCode: number) {
		this.statusCode = statusCode;
		this.writableEnded = true;
		if (!this.closed) this.emit('finish');
	}
	/** the platform closed the connection (it timed out) */
	close() {
		this.closed = true;
		this.emit('close');
	}
	private emit(event: string) {
		for (const listener of this.listeners.get(event) ?? []) listener();
		this.listeners.delete(event);
	}
}

let time: FakeClock;
let memory: DeliveryLedger;
beforeEach(() => {
	time = new FakeClock();
	memory = new DeliveryLedger(() => time);
});

/** One delivery of `key` to `ledger` in one process, each with static data of its own. */
const admit = async (key: string, response = new Response(), ledger = memory) =>
	await ledger.admit({}, key, response);

/** `time`, but for the whole wait for an earlier answer, which never ends on its own. */
const heldClock = (): Clock => ({
	now: () => time.now(),
	sleep: async (ms) =>
		ms >= WAIT_FOR_EARLIER_ANSWER_MS ? await new Promise<void>(() => {}) : await time.sleep(ms),
});

const tick = async () => await new Promise((resolve) => setImmediate(resolve));

test('a repeat of a delivery that started an execution (2xx) is dropped; other deliveries are not', async () => {
	const first = new Response();
	expect(await admit('a', first)).toBe('new');
	first.answer(200);
	expect(await admit('a')).toBe('repeat');
	expect(await admit('b')).toBe('new');
});

test('a repeat of a delivery n8n refused (500) runs: it becomes the remembered attempt', async () => {
	const first = new Response();
	await admit('a', first);
	first.answer(500);
	const second = new Response();
	expect(await admit('a', second)).toBe('new');
	second.answer(204);
	expect(await admit('a')).toBe('repeat');
});

test("a repeat waits for the earlier answer: dropped when it comes within the wait, on the answer's 'finish'", async () => {
	const ledger = new DeliveryLedger(heldClock);
	const first = new Response();
	await admit('a', first, ledger);
	let settled = false;
	const repeat = admit('a', new Response(), ledger).then((verdict) => {
		settled = true;
		return verdict;
	});
	await tick();
	expect(settled).toBe(false);
	first.answer(200);
	expect(await repeat).toBe('repeat');
	expect(time.slept).toEqual([]);
});

test("the earlier attempt's connection closed before n8n answered it (no event follows): the repeat still learns the answer", async () => {
	const ledger = new DeliveryLedger(heldClock);
	const first = new Response();
	await admit('a', first, ledger);
	const repeat = admit('a', new Response(), ledger);
	await tick();
	first.close();
	const started = time.now();
	time.onSleep = (now) => {
		if (now - started >= 1_500) first.answer(200);
	};
	expect(await repeat).toBe('repeat');
	expect(time.now() - started).toBeGreaterThanOrEqual(1_500);
	expect(time.now() - started).toBeLessThan(2_000);
});

test('still unanswered after the wait: treated as a new delivery (a duplicate beats a lost event)', async () => {
	await admit('a');
	const started = time.now();
	expect(await admit('a')).toBe('new');
	expect(time.now() - started).toBeGreaterThanOrEqual(WAIT_FOR_EARLIER_ANSWER_MS);
});

test('forgotten after 74 hours', async () => {
	const first = new Response();
	await admit('a', first);
	first.answer(200);
	time.at += LEDGER_WINDOW_MS - 1;
	expect(await admit('a')).toBe('repeat');
	time.at += 1;
	expect(await admit('a')).toBe('new');
});

test('the memory is capped: the oldest deliveries are forgotten first', async () => {
	for (let i = 0; i <= MAX_REMEMBERED + 5; i++) {
		const response = new Response();
		response.answer(200);
		await admit(`key-${i}`, response);
	}
	expect(memory.size).toBeLessThanOrEqual(MAX_REMEMBERED + 1);
	// the oldest went; a recent one is still known
	expect(await admit('key-0')).toBe('new');
	const recent = `key-${MAX_REMEMBERED}`;
	expect(await admit(recent)).toBe('repeat');
});

describe('the key of a delivery', () => {
	const where = ['workflow-1', 'node-1', 'webhook'];
	const payload = { completion: { id: 7, user_id: 3, content: { id: 101, fullname: 'Safety' } } };

	test('a retry (same bytes) and a redispatch (new now and delivery_id) of one event are one key', () => {
		const retry = occurrenceKey(where, 'Events\\Courses\\Completion_created', payload);
		const reordered = {
			completion: { content: { fullname: 'Safety', id: 101 }, user_id: 3, id: 7 },
		};
		expect(occurrenceKey(where, 'Events\\Courses\\Completion_created', reordered)).toBe(retry);
	});

	test('another event, payload or destination is another key', () => {
		const key = occurrenceKey(where, 'Events\\Courses\\Completion_created', payload);
		const other = { completion: { ...payload.completion, id: 8 } };
		expect(occurrenceKey(where, 'Events\\Courses\\Completion_created', other)).not.toBe(key);
		expect(occurrenceKey(where, 'Events\\Courses\\Completion_updated', payload)).not.toBe(key);
		expect(
			occurrenceKey(
				[...where.slice(0, 2), 'manual'],
				'Events\\Courses\\Completion_created',
				payload,
			),
		).not.toBe(key);
	});
});

/**
 * n8n's handling of one webhook request, as measured on 2.40.7: the workflow (with its static
 * data) is loaded from the database, `webhook()` runs, the execution is created, the static data
 * is saved whole if it changed, and only then is the answer sent. `save` lets a test hold a save
 * back, to play two processes whose requests overlap.
 */
class Database {
	staticData: IDataObject = {};
}

/** The deliveries the database holds as started. */
const stored = (db: Database) => [...sharedDeliveries(db.staticData).keys()];

function request(db: Database, ledger: DeliveryLedger, key: string) {
	const staticData = structuredClone(db.staticData);
	const response = new Response();
	return {
		staticData,
		response,
		/** webhook(): true when the delivery started an execution */
		async webhook(): Promise<boolean> {
			return (await ledger.admit(staticData, key, response)) === 'new';
		},
		/** n8n created the execution: saves the static data, then answers 200 */
		save() {
			db.staticData = structuredClone(staticData);
			response.answer(200);
		},
	};
}

async function deliver(db: Database, ledger: DeliveryLedger, key: string): Promise<boolean> {
	const r = request(db, ledger, key);
	const started = await r.webhook();
	if (started) r.save();
	else r.response.answer(200);
	return started;
}

/** A key as occurrenceKey makes them: 8 base64url characters. */
const k = (name: string) => `${name}________`.slice(0, 8);

describe('two n8n processes behind one URL', () => {
	let db: Database;
	let a: DeliveryLedger;
	let b: DeliveryLedger;
	beforeEach(() => {
		db = new Database();
		a = new DeliveryLedger(() => time);
		b = new DeliveryLedger(() => time);
	});

	test('a retry that lands on the other process is recognised', async () => {
		expect(await deliver(db, a, k('d1'))).toBe(true);
		time.at += 1_000;
		expect(await deliver(db, b, k('d1'))).toBe(false);
		expect(stored(db)).toEqual([k('d1')]);
	});

	test('after an upgrade, what version 1.0.0 saved (12-character keys) is still known', async () => {
		const minute = Math.floor(time.at / 60_000) - 1;
		db.staticData = {
			[LEDGER_FIELD]: `~old.${(time.at - 60_000).toString(36)} ${minute.toString(36)}:${k('d1')}wxyz`,
		};
		expect(await deliver(db, a, k('d1'))).toBe(false);
		expect(await deliver(db, a, k('d2'))).toBe(true);
		expect(stored(db).sort()).toEqual([k('d1'), k('d2')]);
	});

	test('a save that overwrote another is healed by the next save of the process that knew', async () => {
		const overlapping = request(db, b, k('d2')); // B loaded before A saved d1
		await overlapping.webhook();
		expect(await deliver(db, a, k('d1'))).toBe(true);
		overlapping.save(); // last writer wins: d1 is gone from the database
		expect(stored(db)).toEqual([k('d2')]);
		expect(await deliver(db, a, k('d3'))).toBe(true); // A writes all it knows
		expect(await deliver(db, b, k('d1'))).toBe(false);
	});

	test('a save still pending receives what its process learns meanwhile', async () => {
		const pending = request(db, b, k('d2')); // B loaded before A saved d1 ...
		await pending.webhook();
		expect(await deliver(db, a, k('d1'))).toBe(true);
		expect(await deliver(db, b, k('d3'))).toBe(true); // ... and B learns d1 before it saves d2
		pending.save();
		expect(stored(db).sort()).toEqual([k('d1'), k('d2'), k('d3')]);
		expect(await deliver(db, a, k('d2'))).toBe(false);
		expect(await deliver(db, b, k('d1'))).toBe(false);
	});

	test("a retry that reaches the process whose older save overwrote the first attempt's waits for the other's next save, and is recognised", async () => {
		// both processes have served the webhook before
		await deliver(db, a, k('d0'));
		await deliver(db, b, k('d00'));
		const stale = request(db, b, k('d2')); // B loads before A saves d1 ...
		await stale.webhook();
		expect(await deliver(db, a, k('d1'))).toBe(true); // A's answer to d1 is lost on the way
		stale.save(); // ... and saves after: d1 is gone, the newest save is B's own
		expect(stored(db)).not.toContain(k('d1'));
		// while the retry of d1 waits at B, A saves again (d3) and B takes that save in (d4)
		let others: Promise<unknown> | undefined;
		const sleptBefore = time.slept.length;
		time.onSleep = () => {
			others ??= deliver(db, a, k('d3')).then(() => deliver(db, b, k('d4')));
		};
		expect(await deliver(db, b, k('d1'))).toBe(false);
		await others;
		const waited = time.slept.slice(sleptBefore);
		expect(waited.length).toBeGreaterThan(0);
		expect(waited.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(WAIT_FOR_OTHER_SAVE_MS);
	});

	test('without a newer save of the other process the wait ends, and the delivery runs (a duplicate beats a lost event)', async () => {
		await deliver(db, a, k('d0'));
		await deliver(db, b, k('d00')); // B takes in A's save, then saves its own
		expect(await deliver(db, b, k('d1'))).toBe(true);
		expect(time.slept.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(
			WAIT_FOR_OTHER_SAVE_MS,
		);
	});

	test('one process alone never waits, nor after a restart that finds its earlier self in the database', async () => {
		for (let i = 0; i < 5; i++) expect(await deliver(db, a, k(`d${i}`))).toBe(true);
		time.at += 60_000;
		const restarted = new DeliveryLedger(() => time);
		for (let i = 5; i < 10; i++) expect(await deliver(db, restarted, k(`d${i}`))).toBe(true);
		expect(await deliver(db, restarted, k('d1'))).toBe(false);
		expect(time.slept).toEqual([]);
	});

	test('a process that has seen no save of another for a while stops waiting', async () => {
		await deliver(db, a, k('d0'));
		await deliver(db, b, k('d00'));
		time.at += OTHERS_ACTIVE_MS;
		expect(await deliver(db, b, k('d1'))).toBe(true);
		expect(time.slept).toEqual([]);
	});

	test('an attempt n8n could not start (500, nothing saved) is not passed on as started', async () => {
		const refused = request(db, a, k('d1'));
		await refused.webhook();
		refused.response.answer(500); // n8n answers 500 and saves nothing
		expect(await deliver(db, a, k('d2'))).toBe(true);
		expect(stored(db)).toEqual([k('d2')]);
		expect(await deliver(db, b, k('d1'))).toBe(true); // the retry starts it
	});

	test('what started an execution more than 74 hours ago is dropped from the database', async () => {
		await deliver(db, a, k('old'));
		// stored by the 10 minutes, an occurrence counts from its period's last second
		time.at += LEDGER_WINDOW_MS - 1_000;
		await deliver(db, b, k('mid'));
		expect(stored(db).sort()).toEqual([k('mid'), k('old')]);
		time.at += 600_000;
		await deliver(db, b, k('new'));
		expect(stored(db).sort()).toEqual([k('mid'), k('new')]);
	});

	test('the database keeps the newest deliveries up to its cap', async () => {
		const many = new Map(
			Array.from({ length: MAX_SHARED + 10 }, (_, i) => [
				k(`k${i}`),
				Math.floor(time.at / 1000) - Math.floor(i / 2),
			]),
		);
		db.staticData = { [LEDGER_FIELD]: `~other.${time.at.toString(36)} ${groupsText(many)}` };
		await deliver(db, a, k('fresh'));
		const kept = sharedDeliveries(db.staticData);
		expect(kept.size).toBeLessThanOrEqual(MAX_SHARED);
		expect(kept.size).toBeGreaterThanOrEqual(MAX_SHARED * 0.9);
		expect(kept.has(k('fresh'))).toBe(true);
		expect(kept.has(k('k0'))).toBe(true);
		expect(kept.has(k(`k${MAX_SHARED + 9}`))).toBe(false);
	});

	test('at 1,000 deliveries a day, the 74 hours kept take 8 bytes each and 7 per 10 minutes', async () => {
		const delivered = Math.floor((LEDGER_WINDOW_MS / 86_400_000) * 1_000);
		for (let i = 0; i < delivered; i++) {
			await deliver(db, a, k(`s${i}`));
			time.at += 86_400; // 1,000 a day
		}
		const text = String(db.staticData[LEDGER_FIELD]);
		expect(stored(db)).toHaveLength(delivered); // 3,083
		const groups = Math.ceil(LEDGER_WINDOW_MS / 600_000) + 1;
		expect(text.length).toBeLessThanOrEqual(delivered * 8 + groups * 7 + 20); // 27,797: 1.0.0 took some 54,700
	});

	test('the stored form takes 8 bytes per delivery and its period once', async () => {
		for (let i = 0; i < 1_000; i++) {
			await deliver(db, i % 2 ? a : b, k(`m${i}`));
			time.at += 60; // 1,000 deliveries in a minute
		}
		const text = String(db.staticData[LEDGER_FIELD]);
		expect(stored(db)).toHaveLength(1_000);
		expect(text.length).toBeLessThanOrEqual(1_000 * 8 + 60); // the writer, and each period once (plus the own entry's)
		expect(text.split(' ').length).toBeLessThanOrEqual(4);
	});
});

describe("one workflow's traffic and another's memory (issue 48, item 6)", () => {
	/** n8n's database: one node static data per workflow, saved once n8n answered 2xx. */
	async function deliverAll(
		ledgers: ProcessLedgers,
		scope: string,
		db: IDataObject,
		keys: string[],
	) {
		const verdicts: string[] = [];
		for (const key of keys) {
			const working = { ...db };
			const response = new Response();
			verdicts.push(await ledgers.of(scope).admit(working, key, response));
			response.answer(200);
			Object.assign(db, working);
		}
		return verdicts;
	}
	const keysOf = (prefix: string, count: number) =>
		Array.from(
			{ length: count },
			(_, i) => `${prefix}${String(i).padStart(8 - prefix.length, '0')}`,
		);

	test('300 completions, then a 6,000-event sync in another trigger workflow, one more completion and a restart: every retry of the 300 is recognised', async () => {
		const ledgers = new ProcessLedgers(() => time);
		const completions = { static: {} as IDataObject, keys: keysOf('c', 300) };
		const sync = { static: {} as IDataObject, keys: keysOf('u', 6_000) };
		await deliverAll(ledgers, 'completions:trigger', completions.static, completions.keys);
		await deliverAll(ledgers, 'users:trigger', sync.static, sync.keys);
		await deliverAll(ledgers, 'completions:trigger', completions.static, ['c-after-sync']);
		// each workflow's save holds its own deliveries only
		expect(sharedDeliveries(completions.static).size).toBe(301);
		expect([...sharedDeliveries(sync.static).keys()].some((k) => k.startsWith('c'))).toBe(false);

		const restarted = new ProcessLedgers(() => time);
		const retries = await deliverAll(
			restarted,
			'completions:trigger',
			completions.static,
			completions.keys,
		);
		expect(retries.filter((verdict) => verdict === 'new')).toEqual([]);
	}, 180_000);
});
