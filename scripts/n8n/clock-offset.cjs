// Preloaded (`node --require`) into the n8n processes the e2e harness starts with
// LP_CLOCK_OFFSET_MS or LP_CLOCK_OFFSET_FILE set: their clock runs that far ahead, as after a night
// or a weekend with n8n switched off, without waiting for it. The sandbox API's clock is moved the
// same way (`advanceClock`), so both sides agree on the time, as a real platform and n8n do.
// With LP_CLOCK_OFFSET_FILE the offset (ms, added to LP_CLOCK_OFFSET_MS) is read from that file
// and read again whenever the file changes, so a test moves a running n8n's clock forward
// (N8nHost.moveClock): time passing faster, e.g. a 10-minute outage of Google Sheets in seconds.
// n8n 2.x evaluates expressions in an isolate by default (N8N_EXPRESSION_ENGINE=vm) whose clock
// this cannot reach: `$now` there reads the wall clock. A process whose expressions must see the
// moved clock runs with N8N_EXPRESSION_ENGINE=legacy (n8n's other engine, in its own process).
'use strict';

const fs = require('node:fs');

const baseMs = Number(process.env.LP_CLOCK_OFFSET_MS || 0);
const offsetFile = process.env.LP_CLOCK_OFFSET_FILE;
const readFileOffset = () => {
	try {
		const value = Number(fs.readFileSync(offsetFile, 'utf8').trim() || 0);
		return Number.isFinite(value) ? value : 0;
	} catch {
		return 0;
	}
};
let offsetMs = (Number.isFinite(baseMs) ? baseMs : 0) + (offsetFile ? readFileOffset() : 0);
if (offsetFile) {
	const watcher = fs.watchFile(offsetFile, { interval: 100, persistent: false }, () => {
		offsetMs = (Number.isFinite(baseMs) ? baseMs : 0) + readFileOffset();
	});
	watcher.unref?.();
}
if (offsetFile || offsetMs !== 0) {
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
