/**
 * The Completion Trigger's process memory alone: one poll at a time per trigger (an abandoned one
 * does not block forever), and which remembered position replaces a loaded one.
 */
import { initialFeedState } from '../../nodes/LearningPlatformCompletionTrigger/feedState';
import {
	ABANDONED_POLL_MS,
	finishPoll,
	newerPosition,
	rememberPosition,
	resetPollGuard,
	startPoll,
	triggerKey,
} from '../../nodes/LearningPlatformCompletionTrigger/pollGuard';

afterEach(() => resetPollGuard());

const key = triggerKey('workflow-1', 'node-1');

test('one poll at a time per trigger; other triggers are not held up; an abandoned poll stops holding', () => {
	expect(startPoll(key, 1_000)).toBe(true);
	expect(startPoll(key, 2_000)).toBe(false);
	expect(startPoll(triggerKey('workflow-1', 'node-2'), 2_000)).toBe(true);
	expect(startPoll(triggerKey('workflow-2', 'node-1'), 2_000)).toBe(true);
	// still running just before the limit, taken as abandoned at it
	expect(startPoll(key, 1_000 + ABANDONED_POLL_MS - 1)).toBe(false);
	const taken = 1_000 + ABANDONED_POLL_MS;
	expect(startPoll(key, taken)).toBe(true);
	// the abandoned poll ending late does not give away the turn of the one that took over
	finishPoll(key, 1_000);
	expect(startPoll(key, taken + 1)).toBe(false);
	finishPoll(key, taken);
	expect(startPoll(key, taken + 2)).toBe(true);
});

test('a remembered position replaces only an older copy of its own line, as a copy', () => {
	const line = { ...initialFeedState('2026-01-01T00:00:00Z', '[]', 'now'), revision: 4 };
	expect(newerPosition(key, line)).toBeUndefined();
	rememberPosition(key, { ...line, seen: { '7': 'v' } });

	const replaced = newerPosition(key, { ...line, revision: 3 });
	expect(replaced).toEqual({ ...line, seen: { '7': 'v' } });
	replaced!.seen['8'] = 'w';
	expect(newerPosition(key, { ...line, revision: 3 })?.seen).toEqual({ '7': 'v' });

	// current or newer: kept
	expect(newerPosition(key, line)).toBeUndefined();
	expect(newerPosition(key, { ...line, revision: 5 })).toBeUndefined();
	// another line (started over), or a state written before lines had names: kept
	const restarted = initialFeedState('2026-01-01T00:00:00Z', '[]', 'now');
	expect(newerPosition(key, restarted)).toBeUndefined();
	rememberPosition(key, { ...line, lineage: '' });
	expect(newerPosition(key, { ...line, lineage: '', revision: 0 })).toBeUndefined();
	// another trigger: nothing remembered for it
	expect(
		newerPosition(triggerKey('workflow-1', 'node-2'), { ...line, revision: 0 }),
	).toBeUndefined();
});
