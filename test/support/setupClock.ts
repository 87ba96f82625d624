// Every integration test file starts on the wall clock except for the trigger's recovery
// schedule: its 15-minute waits never end in a test (a pending 15-minute timer would keep jest's
// process alive after the tests). Tests that install their own clock restore this one.
import { systemClock, useClock } from '../../nodes/shared/transport/clock';
import { RESCAN_INTERVAL_MS } from '../../nodes/LearningPlatformTrigger/recovery/schedule';

useClock({
	now: () => systemClock.now(),
	sleep: async (ms, signal) =>
		ms >= RESCAN_INTERVAL_MS
			? await new Promise<void>(() => {})
			: await systemClock.sleep(ms, signal),
});
