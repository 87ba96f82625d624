/**
 * The Completion Trigger's running polls alone: one poll at a time per trigger, and an abandoned
 * one does not hold the trigger forever.
 */
import {
	ABANDONED_POLL_MS,
	finishPoll,
	resetPollGuard,
	startPoll,
} from '../../nodes/LearningPlatformCompletionTrigger/pollGuard';

afterEach(() => resetPollGuard());

const key = 'workflow-1:node-1';

test('one poll at a time per trigger; other triggers are not held up; an abandoned poll stops holding', () => {
	expect(startPoll(key, 1_000)).toBe(true);
	expect(startPoll(key, 2_000)).toBe(false);
	expect(startPoll('workflow-1:node-2', 2_000)).toBe(true);
	expect(startPoll('workflow-2:node-1', 2_000)).toBe(true);
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
