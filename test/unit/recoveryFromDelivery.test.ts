/**
 * When a delivery sets off "Recover Missed Deliveries": the first delivery a process receives
 * after it started, unless another process has started a run since then. Each n8n process is a
 * fresh copy of the module (its own memory and start time); the static data is what they share.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

type RecoveryModule = typeof import('../../nodes/LearningPlatformTrigger/recovery');

const SCANNED_AT = 'recoveryScannedAt';

/** A new n8n process: the module loaded afresh, its runs' waits instant, its log kept. */
function startProcess() {
	const logs: string[] = [];
	let recovery!: RecoveryModule;
	jest.isolateModules(() => {
		const { useClock } = jest.requireActual<typeof import('../../nodes/shared/transport/clock')>(
			'../../nodes/shared/transport/clock',
		);
		// the jitter passes at once; the 15-minute schedule never comes round
		useClock({
			now: () => Date.now(),
			sleep: async (ms) => (ms >= 60_000 ? await new Promise<void>(() => {}) : undefined),
		});
		recovery = jest.requireActual<RecoveryModule>('../../nodes/LearningPlatformTrigger/recovery');
		// one jest process plays several n8n processes: each starts now
		recovery.resetRecoveryState();
	});
	// the run itself fails at once (no credentials here) and says so in the log
	const context = {
		getWorkflow: () => ({ id: 'wf1' }),
		getNode: () => ({ id: 'node1' }),
		getNodeWebhookUrl: () => 'https://n8n.test/webhook/x',
		logger: { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) },
	} as unknown as IWebhookFunctions;
	return {
		logs,
		deliver: (staticData: IDataObject) => recovery.recoverFromDelivery.call(context, staticData, 7),
	};
}

const tick = async () => await new Promise((resolve) => setTimeout(resolve, 5));

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

	await tick();
	expect(a.logs.some((m) => m.includes('could not recover missed deliveries'))).toBe(true);
	expect(b.logs).toEqual([]);
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
