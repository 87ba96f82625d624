/**
 * Deterministic demo tenancy (seeded PRNG): learners with custom user fields, ~30 courses,
 * Live Learning content with sessions and attendance, videos, resources, content custom fields
 * (one of them never set) and a feed of a few thousand completion records across every status.
 * The same seed always yields the same data, ids and timestamps.
 */
import type { Store } from './store';
import type {
	CompletionData,
	CompletionStatus,
	Content,
	ContentType,
	Learner,
	Session,
} from './types';
import { floorToSecond, isoOffset, prng, type Prng } from './util';

export interface DemoDataOptions {
	users?: number;
	completions?: number;
	seed?: number;
}

const FIRST = [
	'Ava',
	'Ben',
	'Chloe',
	'Dev',
	'Elena',
	'Farid',
	'Grace',
	'Hiro',
	'Isla',
	'Jonas',
	'Kemi',
	'Liam',
	'Maya',
	'Noah',
	'Olga',
	'Priya',
	'Quinn',
	'Rosa',
	'Sam',
	'Tariq',
	'Uma',
	'Viktor',
	'Wen',
	'Ximena',
	'Yusuf',
	'Zara',
];
const LAST = [
	'Adams',
	'Banerjee',
	'Costa',
	'Dubois',
	'Evans',
	'Fischer',
	'Garcia',
	'Huang',
	'Ibrahim',
	'Jensen',
	'Kowalski',
	'Lopez',
	'Murphy',
	'Nakamura',
	'Okafor',
	'Patel',
	'Quintero',
	'Rossi',
	'Schmidt',
	'Tanaka',
	'Usman',
	'Vargas',
	'Williams',
	'Xu',
	'Young',
	'Zhang',
];
const DEPARTMENTS = [
	'Sales',
	'Engineering',
	'Finance',
	'People',
	'Operations',
	'Customer Success',
	'Legal',
	'Marketing',
];
const TITLES = [
	'Associate',
	'Specialist',
	'Team Lead',
	'Manager',
	'Senior Manager',
	'Director',
	'Analyst',
	'Coordinator',
];
const LOCATIONS = ['London', 'Leeds', 'Dublin', 'Berlin', 'Toronto', 'Remote'];
const TOPICS = [
	'Data Protection Essentials',
	'Fire Safety',
	'Health and Safety at Work',
	'Anti-Bribery',
	'Information Security',
	'Manual Handling',
	'Equality and Diversity',
	'Leading Teams',
	'Giving Feedback',
	'Customer Service Excellence',
	'Project Management Basics',
	'Agile Fundamentals',
	'Time Management',
	'Negotiation Skills',
	'Presentation Skills',
	'Financial Acumen',
	'Safeguarding',
	'Modern Slavery Awareness',
	'Cyber Awareness',
	'First Aid Refresher',
	'Conflict Resolution',
	'Coaching Conversations',
	'Writing for the Web',
	'Excel Intermediate',
	'Accessibility Basics',
	'Mental Health Awareness',
	'Sales Discovery',
	'Onboarding: Welcome',
	'Code of Conduct',
	'Risk Management',
];
const LL_TOPICS = [
	'First Aid at Work (classroom)',
	'Leadership Bootcamp',
	'Fire Warden Training',
	'Negotiation Workshop',
	'Advanced Excel Lab',
	'Mentoring Circle',
	'Public Speaking Clinic',
	'Product Deep Dive',
];
const VIDEO_TOPICS = [
	'Welcome from the CEO',
	'How to Lift Safely',
	'Phishing in 5 Minutes',
	'Our Values',
	'Using the Expense Tool',
	'Meeting Etiquette',
	'Password Hygiene',
	'Desk Setup',
	'Giving Praise',
	'Quarterly Update',
	'Customer Story: Northwind',
	'Intro to OKRs',
];
const RESOURCE_TOPICS = [
	'Employee Handbook',
	'Travel Policy',
	'Brand Guidelines',
	'IT Acceptable Use',
	'Holiday Planner',
	'Onboarding Checklist',
	'Security Incident Form',
	'Benefits Guide',
	'Style Guide',
	'Org Chart',
];
const CATEGORIES = ['Compliance', 'Leadership', 'Professional Skills', 'Technology', 'Wellbeing'];
const TAGS = ['mandatory', 'new-starter', 'annual', 'managers', 'self-paced', 'blended', 'popular'];
const PROGRAMS = [
	{ id: 11, fullname: 'New Starter Programme' },
	{ id: 12, fullname: 'Annual Compliance' },
	{ id: 13, fullname: 'Management Pathway' },
];
const ACTIVITY_NAMES = [
	'Introduction',
	'Module 1',
	'Module 2',
	'Module 3',
	'Case study',
	'Knowledge check',
	'Final assessment',
	'Feedback survey',
];
const COMMENTS = [
	'Completed via recognition of prior learning',
	'Marked complete by manager',
	'Extension granted',
	'Imported from previous LMS',
];
const NOTES = ['Arrived late', 'Left early', 'Excused by manager', 'Joined remotely'];

/** Demo timeline: fixed, so data is identical on every start (all before any realistic "now"). */
export const DEMO_START = Date.UTC(2024, 0, 1);
export const DEMO_END = Date.UTC(2025, 5, 1);
const DAY = 86_400_000;
const HOUR = 3_600_000;

/** Content custom fields configured for the tenancy; `Internal code` is never set (`data: ''`). */
export const CONTENT_FIELD_NAMES = ['Level', 'Accreditation body', 'Review date', 'Internal code'];
export const USER_FIELD_NAMES = ['Department', 'Job title', 'Location', 'Employee number'];

function makeContent(
	r: Prng,
	id: number,
	type: ContentType,
	name: string,
	ctx: { activityId: number; sessionId: number },
): Content {
	const created = DEMO_START - r.int(30, 400) * DAY + r.int(0, 86_399) * 1000;
	const level = r.chance(0.8) ? r.pick(['Beginner', 'Intermediate', 'Advanced']) : '';
	const accreditation = r.chance(0.4) ? r.pick(['CPD', 'IOSH', 'ILM']) : '';
	const review = r.chance(0.6) ? isoOffset(DEMO_END + r.int(10, 400) * DAY) : '';
	const activities: Content['activities'] = [];
	const sessions: Session[] = [];
	if (type === 'Course') {
		const n = r.int(3, 6);
		for (let i = 0; i < n; i++) activities.push({ id: ++ctx.activityId, name: ACTIVITY_NAMES[i] });
		activities.push({ id: ++ctx.activityId, name: ACTIVITY_NAMES[ACTIVITY_NAMES.length - 1] });
	} else if (type === 'Live Learning') {
		activities.push({ id: ++ctx.activityId, name: 'Session attendance' });
		const n = r.int(1, 3);
		for (let i = 0; i < n; i++) {
			const start = DEMO_START + r.int(10, 500) * DAY + r.int(8, 15) * HOUR;
			const virtual = r.chance(0.5);
			sessions.push({
				id: ++ctx.sessionId,
				name: `${name} - Session ${i + 1}`,
				sessiontype: virtual ? 'Virtual' : 'Face to Face',
				start,
				end: start + r.int(1, 7) * HOUR,
				customfields: {
					Location: virtual
						? 'Online'
						: `${r.pick(['Room 1.02', 'Room 2.14', 'Training Suite'])}, ${r.pick(LOCATIONS.slice(0, 5))}`,
					'Meeting link': virtual ? `https://meet.example.com/${id}-${i + 1}` : '',
					Instructor: `${r.pick(FIRST)} ${r.pick(LAST)}`,
				},
			});
		}
	}
	const cost = type === 'Course' && r.chance(0.3) ? r.int(20, 400) * 100 : 0;
	return {
		id,
		centralId: 90_000 + id,
		fullname: name,
		contenttype: type,
		description: `<p>${name}: everything you need to know.</p>`,
		summary: `<p>A ${type.toLowerCase()} on ${name.toLowerCase()}.</p>`,
		status: r.chance(0.9) ? 'Published' : 'Draft',
		cost,
		duration: r.chance(0.7) ? r.int(1, 16) * 15 : null,
		programs: r.chance(0.4) ? [r.pick(PROGRAMS)] : [],
		category:
			type === 'Video' || type === 'Resource'
				? r.chance(0.5)
					? r.pick(CATEGORIES)
					: null
				: r.pick(CATEGORIES),
		tags: TAGS.filter(() => r.chance(0.25)),
		customfields: [
			{ name: 'Level', data: level },
			{ name: 'Accreditation body', data: accreditation },
			{ name: 'Review date', data: review },
			{ name: 'Internal code', data: '' },
		],
		timecreated: floorToSecond(created),
		timemodified: floorToSecond(created + r.int(0, 300) * DAY),
		activities,
		sessions,
		certificateValidityDays: type === 'Course' && r.chance(0.3) ? 365 : null,
		deleted: false,
	};
}

/** Fills an empty store with the seeded demo tenancy. `false` = catalogue and 20 learners, no records. */
export function seedDemoData(store: Store, opt: boolean | DemoDataOptions = true) {
	const o: DemoDataOptions =
		opt === false ? { users: 20, completions: 0 } : opt === true ? {} : opt;
	const nUsers = o.users ?? 300;
	const nCompletions = o.completions ?? 3000;
	const r = prng(o.seed ?? 42);

	// learners
	const taken = new Set<string>();
	for (let i = 0; i < nUsers; i++) {
		const firstname = r.pick(FIRST);
		const lastname = r.pick(LAST);
		let username = `${firstname}.${lastname}`.toLowerCase();
		for (let k = 2; taken.has(username); k++)
			username = `${firstname}.${lastname}${k}`.toLowerCase();
		taken.add(username);
		const id = i + 2; // learner ids start at 2 (1 is the site admin)
		store.counters.learnerId = id;
		const l: Learner = {
			id,
			username,
			email: `${username}@example.com`,
			firstname,
			lastname,
			suspended: r.chance(0.05),
			deleted: false,
			customfields: {
				Department: r.pick(DEPARTMENTS),
				'Job title': r.pick(TITLES),
				Location: r.pick(LOCATIONS),
				'Employee number': r.chance(0.9) ? `E${String(10000 + id)}` : '',
			},
		};
		store.learners.set(id, l);
	}

	// catalogue
	const ctx = { activityId: 1000, sessionId: 5000 };
	TOPICS.forEach((t, i) => store.contents.set(101 + i, makeContent(r, 101 + i, 'Course', t, ctx)));
	LL_TOPICS.forEach((t, i) =>
		store.contents.set(201 + i, makeContent(r, 201 + i, 'Live Learning', t, ctx)),
	);
	VIDEO_TOPICS.forEach((t, i) =>
		store.contents.set(301 + i, makeContent(r, 301 + i, 'Video', t, ctx)),
	);
	RESOURCE_TOPICS.forEach((t, i) =>
		store.contents.set(401 + i, makeContent(r, 401 + i, 'Resource', t, ctx)),
	);

	const learners = [...store.learners.values()];
	const byType = (t: ContentType) =>
		[...store.contents.values()].filter((c) => c.contenttype === t);
	const courses = byType('Course');
	const lls = byType('Live Learning');
	const videos = byType('Video');
	const resources = byType('Resource');

	// completion records
	const records: CompletionData[] = [];
	const pairs = new Set<string>();
	const newRecord = (
		learner: Learner,
		content: Content,
		status: CompletionStatus,
		floor = DEMO_START,
	): CompletionData => {
		const enrolled =
			floor + r.int(0, Math.max(1, Math.floor((DEMO_END - floor) / 1000) - 60 * 86_400)) * 1000;
		const started = status === 'Enrolled' ? null : enrolled + r.int(0, 20 * 86_400) * 1000;
		const done = ['Completed', 'Viewed', 'Archived', 'Did Not Complete'].includes(status);
		const completed = done && started != null ? started + r.int(600, 30 * 86_400) * 1000 : null;
		const last = Math.min(DEMO_END, (completed ?? started ?? enrolled) + r.int(0, 2 * 3600) * 1000);
		const certified =
			(status === 'Completed' || status === 'Archived') &&
			content.contenttype !== 'Video' &&
			content.contenttype !== 'Resource';
		return {
			completionid: store.next('completionId'),
			userid: learner.id,
			contentid: content.id,
			certificateid: certified ? `CERT-${content.id}-${learner.id}-${r.int(1000, 9999)}` : '',
			comment: done && r.chance(0.05) ? r.pick(COMMENTS) : null,
			lastupdated: floorToSecond(last),
			timeenrolled: floorToSecond(enrolled),
			timestarted: started == null ? null : floorToSecond(started),
			timecompleted:
				completed == null || status === 'Did Not Complete' ? null : floorToSecond(completed),
			expiry:
				completed != null && certified && content.certificateValidityDays
					? floorToSecond(completed + content.certificateValidityDays * DAY)
					: null,
			completionstatus: status,
		};
	};
	for (
		let guard = 0;
		records.length < nCompletions && guard < nCompletions * 20 && learners.length > 0;
		guard++
	) {
		const learner = r.pick(learners);
		const x = r.next();
		const content =
			x < 0.55
				? r.pick(courses)
				: x < 0.7
					? r.pick(lls)
					: x < 0.85
						? r.pick(videos)
						: r.pick(resources);
		const key = `${learner.id}:${content.id}`;
		if (pairs.has(key)) continue;
		pairs.add(key);
		const y = r.next();
		let status: CompletionStatus;
		if (content.contenttype === 'Course')
			status = y < 0.55 ? 'Completed' : y < 0.78 ? 'In Progress' : 'Enrolled';
		else if (content.contenttype === 'Live Learning')
			status =
				y < 0.45
					? 'Completed'
					: y < 0.7
						? 'Enrolled'
						: y < 0.85
							? 'In Progress'
							: 'Did Not Complete';
		else status = 'Viewed';
		if (content.contenttype === 'Course' && records.length + 1 < nCompletions && r.chance(0.08)) {
			// a re-enrolment: the older record is archived and keeps its id, the new one has a new id
			const old = newRecord(learner, content, 'Archived', DEMO_START);
			const renewed = newRecord(
				learner,
				content,
				status,
				Math.min(old.lastupdated + DAY, DEMO_END - 61 * DAY),
			);
			old.lastupdated = Math.max(old.lastupdated, renewed.timeenrolled!); // archived when re-enrolled
			records.push(old, renewed);
		} else {
			records.push(newRecord(learner, content, status));
		}
	}
	records.sort((a, b) => a.lastupdated - b.lastupdated || a.completionid - b.completionid);
	for (const rec of records) store.feed.put(rec, 0, 0);

	// attendance of Live Learning sessions
	for (const rec of records) {
		const content = store.contents.get(rec.contentid)!;
		if (content.contenttype !== 'Live Learning' || rec.completionstatus === 'Enrolled') continue;
		const session = content.sessions[rec.userid % content.sessions.length];
		store.attendance.push({
			userid: rec.userid,
			contentid: content.id,
			sessionid: session.id,
			attendancestatus: rec.completionstatus === 'Did Not Complete' ? 'Did Not Attend' : 'Attended',
			note: r.chance(0.15) ? r.pick(NOTES) : null,
		});
	}
}
