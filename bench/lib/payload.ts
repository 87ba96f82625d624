/**
 * The payload of a bench delivery: `Completion_created`'s shape (spec rule 8) with `bench_seq`,
 * the number the rows find each execution's delivery by, and `completion.id` = `idBase + seq`.
 */
export function benchCompletionPayload(
	seq: number,
	idBase: number,
	extra: Record<string, number> = {},
) {
	return {
		...extra,
		bench_seq: seq,
		completion: {
			id: idBase + seq,
			user_id: 2 + (seq % 300),
			user: {
				id: 2 + (seq % 300),
				username: `learner${seq % 300}`,
				email: `learner${seq % 300}@example.com`,
				firstname: 'Bench',
				lastname: 'Learner',
			},
			userdata: [],
			content_id: 101 + (seq % 30),
			content_type: 'Course',
			content: {
				id: 101 + (seq % 30),
				fullname: 'Bench course',
				summary: '<p>Bench</p>',
				timecreated: 1714554000,
			},
			contentdata: [],
			certificate_link: '',
			time_enrolled: '2024-05-01T09:00:00+00:00',
			time_started: '2024-05-02T09:00:00+00:00',
			time_completed: '2024-05-03T09:00:00+00:00',
		},
	};
}
