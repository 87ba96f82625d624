// Preloaded (`node --require`) into the n8n processes the e2e harness starts with
// LP_CLOCK_OFFSET_MS set: their clock runs that far ahead, as after a night or a weekend with n8n
// switched off, without waiting for it. The sandbox API's clock is moved the same way
// (`advanceClock`), so both sides agree on the time, as a real platform and n8n do.
'use strict';

const offsetMs = Number(process.env.LP_CLOCK_OFFSET_MS || 0);
if (Number.isFinite(offsetMs) && offsetMs !== 0) {
	const RealDate = Date;
	class AheadDate extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(RealDate.now() + offsetMs);
			else super(...args);
		}
		static now() {
			return RealDate.now() + offsetMs;
		}
	}
	globalThis.Date = AheadDate;
	// a process's start as its own clock reads it
	const timeOrigin = performance.timeOrigin + offsetMs;
	Object.defineProperty(performance, 'timeOrigin', { value: timeOrigin });
}
