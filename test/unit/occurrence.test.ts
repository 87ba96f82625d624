import { occurrenceKey } from '../../nodes/LearningPlatformTrigger/deliveries/repeatKey';
import { occurrenceOf } from '../../nodes/LearningPlatformTrigger/deliveries/repeatKey';

const CREATED = 'Events\\Courses\\Completion_created';
const UPDATED = 'Events\\Courses\\Completion_updated';
const where = ['workflow-1', 'node-1', 'webhook'];

/** A Completion_created payload as spec rule 8 gives it. */
const created = {
	completion: {
		id: 7,
		user_id: 3,
		user: { id: 3, username: 'ada', email: 'ada@example.com', firstname: 'Ada', lastname: 'L' },
		userdata: [{ name: 'Department', data: 'HR' }],
		content_id: 101,
		content_type: 'Course',
		content: { id: 101, fullname: 'Safety', summary: 'Old summary', timecreated: 1_700_000_000 },
		contentdata: [],
		certificate_link: 'https://lms.example/certificates/C-7',
		time_enrolled: '2026-11-02T09:00:00+00:00',
		time_started: '2026-11-02T09:05:00+00:00',
		time_completed: '2026-11-03T10:00:00+00:00',
	},
};
const key = (event: string, payload: unknown) =>
	occurrenceKey(where, event, occurrenceOf(event, payload));

test('a created completion is its record and its times, written out', () => {
	expect(occurrenceOf(CREATED, created)).toEqual({
		completion: {
			id: 7,
			user_id: 3,
			content_id: 101,
			time_enrolled: '2026-11-02T09:00:00+00:00',
			time_started: '2026-11-02T09:05:00+00:00',
			time_completed: '2026-11-03T10:00:00+00:00',
		},
	});
});

test('rendered again with a changed learner, course or certificate link: the same occurrence', () => {
	const renderedAgain = {
		completion: {
			...created.completion,
			user: { ...created.completion.user, email: 'ada.lovelace@example.com', lastname: 'Lovelace' },
			userdata: [{ name: 'Department', data: 'Finance' }],
			content: { ...created.completion.content, summary: 'New summary' },
			certificate_link: 'https://moved.example/certificates/C-7',
		},
	};
	expect(key(CREATED, renderedAgain)).toBe(key(CREATED, created));
});

test('the same record completed at another time, or another record: another occurrence', () => {
	const completedAgain = {
		completion: { ...created.completion, time_completed: '2026-11-04T10:00:00+00:00' },
	};
	expect(key(CREATED, completedAgain)).not.toBe(key(CREATED, created));
	const anotherRecord = { completion: { ...created.completion, id: 8 } };
	expect(key(CREATED, anotherRecord)).not.toBe(key(CREATED, created));
});

test('other events and payloads without the spec shape are identified by the whole payload', () => {
	expect(occurrenceOf(UPDATED, created)).toBe(created);
	const changedUser = {
		completion: {
			...created.completion,
			user: { ...created.completion.user, email: 'x@example.com' },
		},
	};
	expect(key(UPDATED, changedUser)).not.toBe(key(UPDATED, created));
	const noId = { completion: { ...created.completion, id: '7' } };
	expect(occurrenceOf(CREATED, noId)).toBe(noId);
	expect(occurrenceOf(CREATED, [1, 2])).toEqual([1, 2]);
	expect(occurrenceOf(CREATED, { learner: 3 })).toEqual({ learner: 3 });
});
