/**
 * Webhook events (spec §Events): the names, wildcard matching, and payload shapes.
 * Names use single backslashes on the wire, e.g. `Events\Courses\Completion_created`.
 *
 * `Events\Courses\Completion_*` payloads follow rule 8 (`payload.completion`). Shapes of the
 * other events are not shown in the spec; the sandbox's choices are documented in the README.
 */
import type { Sandbox } from './http';
import type { CompletionData, Content, Learner } from './types';
import { isoOffset, unixSeconds } from './util';

const CATEGORIES: Record<string, string[]> = {
	Notifications: [
		'Duedate',
		'Refresher',
		'Attendance',
		'Session_changed',
		'Session_cancelled',
		'Expressed_interest',
		'Enrolment',
		'Account_Merge',
		'Session_reminder',
		'Session_registration',
		'Session_withdrawn',
		'Session_deny',
		'Instructor_assignment',
		'Instructor_unassignment',
	],
	Users: ['Created', 'Updated', 'Deleted', 'Tenancy_added', 'Tenancy_removed'],
	Courses: [
		'Completion_created',
		'Completion_updated',
		'Completion_deleted',
		'Completion_archived',
	],
	Quiz: ['Attempt_completed'],
};

export const CONCRETE_EVENTS: string[] = Object.entries(CATEGORIES).flatMap(([cat, names]) =>
	names.map((n) => `Events\\${cat}\\${n}`),
);
export const WILDCARD_EVENTS: string[] = [
	...Object.keys(CATEGORIES).map((cat) => `Events\\${cat}\\*`),
	'*',
];
/** what `GET {webhook_root}/events` returns */
export const ALL_EVENTS: string[] = [...CONCRETE_EVENTS, ...WILDCARD_EVENTS];

export const EVENT = {
	completionCreated: 'Events\\Courses\\Completion_created',
	completionUpdated: 'Events\\Courses\\Completion_updated',
	completionDeleted: 'Events\\Courses\\Completion_deleted',
	completionArchived: 'Events\\Courses\\Completion_archived',
	userCreated: 'Events\\Users\\Created',
	userUpdated: 'Events\\Users\\Updated',
	userDeleted: 'Events\\Users\\Deleted',
	accountMerge: 'Events\\Notifications\\Account_Merge',
} as const;

export const isWildcard = (e: string) => e === '*' || e.endsWith('\\*');

/** Does a subscription's event (name or wildcard) cover a concrete event? */
export function eventMatches(subscribed: string, event: string): boolean {
	if (subscribed === '*' || subscribed === event) return true;
	return subscribed.endsWith('\\*') && event.startsWith(subscribed.slice(0, -1));
}

const iso = (ms: number | null) => (ms == null ? '' : isoOffset(ms));

export function userPayload(l: Learner) {
	return {
		id: l.id,
		username: l.username,
		email: l.email,
		firstname: l.firstname,
		lastname: l.lastname,
	};
}

/** Rule 8: `payload.completion` (used for every Events\Courses\Completion_* event). */
export function completionPayload(sb: Sandbox, rec: CompletionData) {
	const l = sb.store.learners.get(rec.userid)!;
	const c: Content = sb.store.contents.get(rec.contentid)!;
	return {
		completion: {
			id: rec.completionid,
			user_id: l.id,
			user: userPayload(l),
			userdata: Object.entries(l.customfields).map(([name, data]) => ({ name, data })),
			content_id: c.id,
			content_type: c.contenttype,
			content: {
				id: c.id,
				fullname: c.fullname,
				summary: c.summary,
				timecreated: unixSeconds(c.timecreated),
			},
			contentdata: c.customfields.map((f) => ({ ...f })),
			certificate_link: rec.certificateid
				? `${sb.url}/certificates/${encodeURIComponent(rec.certificateid)}`
				: '',
			time_enrolled: iso(rec.timeenrolled),
			time_started: iso(rec.timestarted),
			time_completed: iso(rec.timecompleted),
		},
	};
}

/** A sample payload for any concrete event (relay without url, and redispatch of synthetic events). */
export function samplePayload(
	sb: Sandbox,
	event: string,
): { payload: unknown; completionId: number | null } {
	const { store } = sb;
	const learner = [...store.learners.values()].find((l) => !l.deleted);
	const category = event.split('\\')[1];
	if (category === 'Courses') {
		for (const rec of store.feed.current())
			if (
				rec.completionstatus === 'Completed' &&
				store.contents.get(rec.contentid)?.contenttype === 'Course'
			)
				return { payload: completionPayload(sb, rec), completionId: null };
	}
	const user = learner
		? userPayload(learner)
		: {
				id: 2,
				username: 'sample.user',
				email: 'sample.user@example.com',
				firstname: 'Sample',
				lastname: 'User',
			};
	const content = [...store.contents.values()].find(
		(c) => !c.deleted && c.contenttype === 'Live Learning',
	);
	const name = event.split('\\')[2];
	switch (category) {
		case 'Users':
			return { payload: { user }, completionId: null };
		case 'Quiz':
			return {
				payload: {
					attempt: {
						id: 1,
						user_id: user.id,
						user,
						quiz_id: 1,
						content_id: 101,
						grade: 8,
						max_grade: 10,
						passed: true,
						time_finished: isoOffset(store.now()),
					},
				},
				completionId: null,
			};
		case 'Notifications':
			if (name === 'Account_Merge')
				return {
					payload: { merge: { from_user_id: user.id + 1, to_user_id: user.id, user } },
					completionId: null,
				};
			return {
				payload: {
					notification: {
						type: name,
						user,
						content: content
							? { id: content.id, fullname: content.fullname, content_type: content.contenttype }
							: null,
						session: content?.sessions[0]
							? {
									id: content.sessions[0].id,
									name: content.sessions[0].name,
									start: isoOffset(content.sessions[0].start),
								}
							: null,
					},
				},
				completionId: null,
			};
		default:
			return { payload: {}, completionId: null };
	}
}
