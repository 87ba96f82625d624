/**
 * When a delivery sets off "Recover Missed Deliveries": the first delivery a process receives
 * after it started, unless another process has started a run since then. Each n8n process is a
 * fresh copy of the module (its own memory and start time); the static data is what they share.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

type RecoveryModule = typeof import('../../nodes/LearningPlatformTrigger/recovery/schedule');

const SCANNED_AT = 'recoveryScannedAt';

/**
 * A new n8n process: the module loaded afresh, its runs' waits instant (or, with `startGate`,
 * over when the gate opens), its log kept.
 */
function startProcess(startGate?: Promise<void>) {
	const logs: string[] = [];
	let recovery!: RecoveryModule;
	jest.isolateModules(() => {
		const { useClock } = jest.requireActual<typeof import('../../nodes/shared/transport/clock')>(
			'../../nodes/shared/transport/clock',
		);
		// the jitter passes at once; the 15-minute schedule never comes round
		useClock({
			now: () => Date.now(),
			sleep: async (ms) => (ms >= 60_000 ? await new Promise<void>(() => {}) : await startGate),
		});
		recovery = jest.requireActual<RecoveryModule>(
			'../../nodes/LearningPlatformTrigger/recovery/schedule',
		);
		// one jest process plays several n8n processes: each starts now
		recovery.resetRecoveryState();
	});
	// the run itself fails at once (no credentials here) and says so in the log
	const context = {
		getWorkflow: () => ({ id: 'wf1' }),
		getNode: () => ({ id: 'node1' }),
		getNodeWebhookUrl: () => 'https://n8n.invalid/webhook/x',
		logger: { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) },
	} as unknown as IWebhookFunctions;
	return {
		logs,
		deliver: (staticData: IDataObject) =>
			recovery.recoverFromDelivery(context, staticData, 7, false),
		/** a delivery carrying a `delivery_id`: a redispatch some run asked for */
		redispatched: (staticData: IDataObject) =>
			recovery.recoverFromDelivery(context, staticData, 7, true),
		/** a delivery this process recognised as a repeat: n8n loaded `staticData` for it */
		repeat: (staticData: IDataObject) => recovery.noteRecoveryMark(context, staticData, 7),
	};
}

/** Lets the clock move on, so that marks written before and after differ. */
const tick = async () => await new Promise((resolve) => setTimeout(resolve, 5));

const ENDED = /: (missed deliveries|could not recover missed deliveries) \(/;

/**
 * Every microtask queued so far has run: a run a delivery starts here begins (and logs so) after
 * microtasks only, its waits being instant.
 */
const microtasksDrained = async () => await new Promise((resolve) => setImmediate(resolve));

/** Waits until `logs` holds `count` ended runs: the marker before any verdict on the logs. */
async function runsEnded(logs: string[], count = 1): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (logs.filter((line) => ENDED.test(line)).length < count) {
		if (Date.now() > deadline) throw new Error(`no run ended in 10 s: ${JSON.stringify(logs)}`);
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
}

test('processes restarted together: the first delivery to reach one starts the run, the others leave it', async () => {
	const beforeOutage = { [SCANNED_AT]: Date.now() - 60_000 };
	const a = startProcess();
	const b = startProcess();
	await tick();

	const loadedByA = structuredClone(beforeOutage);
	a.deliver(loadedByA);
	expect(loadedByA[SCANNED_AT]).toBeGreaterThan(beforeOutage[SCANNED_AT]);

	await tick();
	const loadedByB = structuredClone(loadedByA); // n8n saved A's request before B's loaded
	b.deliver(loadedByB);
	expect(loadedByB[SCANNED_AT]).toBe(loadedByA[SCANNED_AT]);

	await runsEnded(a.logs);
	expect(a.logs.some((m) => m.includes('could not recover missed deliveries'))).toBe(true);
	await microtasksDrained();
	expect(b.logs).toEqual([]);
});

test("a redispatch reaching a process before it learnt of the run that asked for it starts no second run; the process's next ordinary delivery does", async () => {
	const beforeOutage = { [SCANNED_AT]: Date.now() - 60_000 };
	const a = startProcess();
	const b = startProcess();
	await tick();
	a.deliver(structuredClone(beforeOutage));

	// B loaded the static data before A's save: only the delivery itself tells of A's run
	const loadedByB = structuredClone(beforeOutage);
	b.redispatched(loadedByB);
	expect(loadedByB[SCANNED_AT]).toBe(beforeOutage[SCANNED_AT]);
	await microtasksDrained();
	expect(b.logs).toEqual([]);

	// an ordinary delivery, still without A's mark: B's first run since it started
	const next = structuredClone(beforeOutage);
	b.deliver(next);
	expect(next[SCANNED_AT]).toBeGreaterThan(beforeOutage[SCANNED_AT]);
	await runsEnded(b.logs);
	expect(b.logs[0]).toBe(
		'Learning Platform Trigger: looking for missed deliveries (found from a delivery)',
	);
	await runsEnded(a.logs);
});

test('a process started after the last run starts one on its first delivery, then not again', async () => {
	const earlier = startProcess();
	const data: IDataObject = {};
	earlier.deliver(data);
	const ranAt = data[SCANNED_AT] as number;

	await tick();
	const later = startProcess();
	await tick();
	const loaded = structuredClone(data);
	later.deliver(loaded);
	expect(loaded[SCANNED_AT]).toBeGreaterThan(ranAt);

	const again = structuredClone(loaded);
	await tick();
	later.deliver(again);
	expect(again[SCANNED_AT]).toBe(loaded[SCANNED_AT]);
});

test("two processes both started a run (one save took the other's mark back): the earlier run stops once its process learns of the later one", async () => {
	let open!: () => void;
	const gate = new Promise<void>((resolve) => (open = resolve));
	const beforeOutage = { [SCANNED_AT]: Date.now() - 60_000 };
	const a = startProcess(gate);
	const b = startProcess(gate);
	await tick();

	const savedByA = structuredClone(beforeOutage);
	a.deliver(savedByA);
	await tick();
	// B's request loaded the static data before A's save and is saved after it
	const savedByB = structuredClone(beforeOutage);
	b.deliver(savedByB);
	expect(savedByB[SCANNED_AT]).toBeGreaterThan(savedByA[SCANNED_AT] as number);

	// a repeat reaching A loads B's save: A now knows of the later run
	a.repeat(structuredClone(savedByB));
	open();
	await runsEnded(a.logs);
	await runsEnded(b.logs);

	// each run says when it begins and how it ended
	expect(a.logs).toEqual([
		'Learning Platform Trigger: looking for missed deliveries (found from a delivery)',
		expect.stringContaining('a run started later in another n8n process'),
	]);
	expect(a.logs[1]).toContain('0 redispatched');
	// B's run went on (here it fails at once: no credentials)
	expect(b.logs).toEqual([
		'Learning Platform Trigger: looking for missed deliveries (found from a delivery)',
		expect.stringContaining('could not recover missed deliveries'),
	]);
});

test('a process never saves a mark older than one it has seen', async () => {
	const a = startProcess();
	const b = startProcess();
	await tick();
	const savedByA: IDataObject = {};
	a.deliver(savedByA);
	await tick();
	b.repeat(structuredClone(savedByA));

	// B's next delivery loaded a save that took A's mark back
	const stale = { [SCANNED_AT]: (savedByA[SCANNED_AT] as number) - 60_000 };
	b.deliver(stale);
	expect(stale[SCANNED_AT]).toBe(savedByA[SCANNED_AT]);
	// and B starts no run of its own: A has run since B started
	await microtasksDrained();
	expect(b.logs).toEqual([]);
});
