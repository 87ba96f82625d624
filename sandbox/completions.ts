/**
 * Changes to completion records (spec §States and transitions) as the control API simulates them.
 * Each change writes a new version into the feed (visible after the configured delay) and fires
 * the matching webhook event:
 * - completion (create or update of the user's current record) -> Events\Courses\Completion_created
 * - data change of a record (moves to the feed's tail)           -> Events\Courses\Completion_updated
 * - re-enrolment: the old record is archived and keeps its id, a new record gets a new
 *   completionid                                                -> Completion_archived + Completion_created
 * - user update (email, first or last name)                     -> Events\Users\Updated
 *   (no record changes: the feed and completion payloads rendered from now on show the new values)
 * - user deletion / content deletion: records vanish from the feed silently (Users\Deleted fires
 *   for a user; nothing for content)
 * - account merge: the merged user's records are retired and re-issued with new ids under the
 *   surviving user                                               -> Events\Notifications\Account_Merge
 */
import { EVENT, completionPayload, userPayload } from './events';
import type { Sandbox } from './http';
import type { CompletionData, CompletionStatus, Content, Learner } from './types';
import { COMPLETION_STATUSES } from './types';
import { floorToSecond } from './util';

export class NotFound extends Error {}
export class Invalid extends Error {}

const DAY = 86_400_000;
const DONE: CompletionStatus[] = ['Completed', 'Viewed', 'Archived'];

function put(sb: Sandbox, rec: CompletionData) {
	sb.store.feed.put(rec, sb.store.now(), sb.store.config.feedVisibilityDelayMs);
	sb.store.dirty();
}

function learnerOf(sb: Sandbox, userId: unknown): Learner {
	if (userId === undefined || userId === null) {
		const pool = [...sb.store.learners.values()].filter((l) => !l.deleted && !l.suspended);
		if (!pool.length) throw new Invalid('no learner available');
		return sb.store.rng.pick(pool);
	}
	const l = sb.store.learners.get(Number(userId));
	if (!l || l.deleted) throw new NotFound(`user ${String(userId)} not found`);
	return l;
}

function contentOf(sb: Sandbox, contentId: unknown): Content {
	if (contentId === undefined || contentId === null) {
		const pool = [...sb.store.contents.values()].filter(
			(c) => !c.deleted && c.contenttype === 'Course',
		);
		if (!pool.length) throw new Invalid('no course available');
		return sb.store.rng.pick(pool);
	}
	const c = sb.store.contents.get(Number(contentId));
	if (!c || c.deleted) throw new NotFound(`content ${String(contentId)} not found`);
	return c;
}

function recordOf(sb: Sandbox, completionId: unknown): CompletionData {
	const rec = sb.store.feed.get(Number(completionId));
	if (!rec) throw new NotFound(`completion ${String(completionId)} not found`);
	return rec;
}

function certificate(c: Content, learnerId: number, status: CompletionStatus, now: number) {
	const certified =
		status === 'Completed' && c.contenttype !== 'Video' && c.contenttype !== 'Resource';
	return {
		certificateid: certified ? `CERT-${c.id}-${learnerId}-${Math.floor(now / 1000) % 100000}` : '',
		expiry: certified && c.certificateValidityDays ? now + c.certificateValidityDays * DAY : null,
	};
}

/** A learner completes (or progresses in) a piece of content: updates their current record or creates one. */
export function simulateCompletion(
	sb: Sandbox,
	input: { userId?: unknown; contentId?: unknown; completionstatus?: unknown },
): CompletionData {
	const learner = learnerOf(sb, input.userId);
	const content = contentOf(sb, input.contentId);
	const fallback: CompletionStatus =
		content.contenttype === 'Video' || content.contenttype === 'Resource' ? 'Viewed' : 'Completed';
	const status = (input.completionstatus ?? fallback) as CompletionStatus;
	if (!COMPLETION_STATUSES.includes(status))
		throw new Invalid(`completionstatus must be one of ${COMPLETION_STATUSES.join(', ')}`);
	const now = floorToSecond(sb.store.now());
	let existing: CompletionData | undefined;
	for (const r of sb.store.feed.current())
		if (r.userid === learner.id && r.contentid === content.id && r.completionstatus !== 'Archived')
			existing = r;
	const done = DONE.includes(status) || status === 'Did Not Complete';
	const cert = certificate(content, learner.id, status, now);
	const rec: CompletionData = {
		completionid: existing?.completionid ?? sb.store.next('completionId'),
		userid: learner.id,
		contentid: content.id,
		certificateid: existing?.certificateid || cert.certificateid,
		comment: existing?.comment ?? null,
		lastupdated: now,
		timeenrolled: existing?.timeenrolled ?? now,
		timestarted: status === 'Enrolled' ? null : (existing?.timestarted ?? now),
		timecompleted: done && status !== 'Did Not Complete' ? now : null,
		expiry: cert.expiry ?? existing?.expiry ?? null,
		completionstatus: status,
	};
	if (status !== 'Completed') {
		rec.certificateid =
			existing?.certificateid && status === 'Archived' ? existing.certificateid : '';
		rec.expiry = null;
	}
	put(sb, rec);
	if (
		content.contenttype === 'Live Learning' &&
		content.sessions.length &&
		(status === 'Completed' || status === 'Did Not Complete')
	) {
		const session = content.sessions[learner.id % content.sessions.length];
		const a = sb.store.attendance.find(
			(x) => x.userid === learner.id && x.sessionid === session.id,
		);
		const attendancestatus = status === 'Completed' ? 'Attended' : 'Did Not Attend';
		if (a) a.attendancestatus = attendancestatus;
		else
			sb.store.attendance.push({
				userid: learner.id,
				contentid: content.id,
				sessionid: session.id,
				attendancestatus,
				note: null,
			});
	}
	sb.deliveries.dispatch(EVENT.completionCreated, completionPayload(sb, rec), rec.completionid);
	return rec;
}

/** The record's data changes: new `lastupdated`, so it moves to the feed's tail. */
export function simulateRecordChange(sb: Sandbox, completionId: unknown): CompletionData {
	const old = recordOf(sb, completionId);
	const now = floorToSecond(sb.store.now());
	const rec: CompletionData = {
		...old,
		comment: `Record updated ${new Date(now).toISOString()}`,
		lastupdated: now,
	};
	put(sb, rec);
	sb.deliveries.dispatch(EVENT.completionUpdated, completionPayload(sb, rec), rec.completionid);
	return rec;
}

/** Re-enrolment: the old record is archived (keeps its id); a new `Enrolled` record gets a new id. */
export function simulateReEnrolment(
	sb: Sandbox,
	completionId: unknown,
): { archived: CompletionData; created: CompletionData } {
	const old = recordOf(sb, completionId);
	if (old.completionstatus === 'Archived')
		throw new Invalid(`completion ${old.completionid} is already archived`);
	const now = floorToSecond(sb.store.now());
	const archived: CompletionData = { ...old, completionstatus: 'Archived', lastupdated: now };
	const created: CompletionData = {
		completionid: sb.store.next('completionId'),
		userid: old.userid,
		contentid: old.contentid,
		certificateid: '',
		comment: null,
		lastupdated: now,
		timeenrolled: now,
		timestarted: null,
		timecompleted: null,
		expiry: null,
		completionstatus: 'Enrolled',
	};
	put(sb, archived);
	put(sb, created);
	sb.deliveries.dispatch(
		EVENT.completionArchived,
		completionPayload(sb, archived),
		archived.completionid,
	);
	sb.deliveries.dispatch(
		EVENT.completionCreated,
		completionPayload(sb, created),
		created.completionid,
	);
	return { archived, created };
}

function removeRecords(sb: Sandbox, pred: (r: CompletionData) => boolean): number[] {
	const ids = [...sb.store.feed.current()].filter(pred).map((r) => r.completionid);
	for (const id of ids) sb.store.feed.remove(id);
	return ids;
}

/** User deletion: the user's records vanish from the feed silently; Events\Users\Deleted fires. */
export function simulateUserDeletion(sb: Sandbox, userId: unknown): { removed: number[] } {
	const l = learnerOf(sb, userId ?? -1);
	l.deleted = true;
	const removed = removeRecords(sb, (r) => r.userid === l.id);
	sb.store.dirty();
	sb.deliveries.dispatch(EVENT.userDeleted, { user: userPayload(l) });
	return { removed };
}

/**
 * A learner's email, first or last name change (at least one given, each a non-empty string):
 * no record changes or moves in the feed, but everything rendered from the learner from now on
 * shows the new values. Events\Users\Updated fires.
 */
export function simulateUserUpdate(
	sb: Sandbox,
	input: { userId?: unknown; email?: unknown; firstname?: unknown; lastname?: unknown },
): Learner {
	const l = learnerOf(sb, input.userId ?? -1);
	const fields = ['email', 'firstname', 'lastname'] as const;
	const given = fields.filter((f) => input[f] !== undefined);
	if (!given.length) throw new Invalid('give at least one of email, firstname, lastname');
	for (const f of given)
		if (typeof input[f] !== 'string' || (input[f] as string).trim() === '')
			throw new Invalid(`${f} must be a non-empty string`);
	if (input.email !== undefined && !(input.email as string).includes('@'))
		throw new Invalid('email must contain @');
	for (const f of given) l[f] = input[f] as string;
	sb.store.dirty();
	sb.deliveries.dispatch(EVENT.userUpdated, { user: userPayload(l) });
	return l;
}

/** Content deletion: its records vanish from the feed silently (no event). */
export function simulateContentDeletion(sb: Sandbox, contentId: unknown): { removed: number[] } {
	const c = contentOf(sb, contentId ?? -1);
	c.deleted = true;
	const removed = removeRecords(sb, (r) => r.contentid === c.id);
	sb.store.dirty();
	return { removed };
}

/** Account merge: the merged user's ids are retired, new ids issued under the surviving user. */
export function simulateAccountMerge(sb: Sandbox, fromUserId: unknown, toUserId: unknown) {
	const from = learnerOf(sb, fromUserId ?? -1);
	const to = learnerOf(sb, toUserId ?? -1);
	if (from.id === to.id) throw new Invalid('fromUserId and toUserId must differ');
	const old = [...sb.store.feed.current()].filter((r) => r.userid === from.id);
	const now = floorToSecond(sb.store.now());
	const created: CompletionData[] = [];
	for (const r of old) {
		sb.store.feed.remove(r.completionid);
		const rec = {
			...r,
			completionid: sb.store.next('completionId'),
			userid: to.id,
			lastupdated: now,
		};
		put(sb, rec);
		created.push(rec);
	}
	from.deleted = true;
	sb.store.dirty();
	sb.deliveries.dispatch(EVENT.accountMerge, {
		merge: { from_user_id: from.id, to_user_id: to.id, user: userPayload(to) },
	});
	return { retired: old.map((r) => r.completionid), created };
}

/**
 * Bulk feed growth for benchmarks: completed records, visible at once, no events. Only active
 * learners, so that every generated record is in the default feed (suspended ones are hidden
 * without `showSuspended`).
 */
export function generateRecords(sb: Sandbox, count: number, contentType?: string): number {
	const { store } = sb;
	const learners = [...store.learners.values()].filter((l) => !l.deleted && !l.suspended);
	const contents = [...store.contents.values()].filter(
		(c) =>
			!c.deleted && (!contentType || c.contenttype.toLowerCase() === contentType.toLowerCase()),
	);
	if (!learners.length || !contents.length)
		throw new Invalid('no learners or content to generate records for');
	const now = floorToSecond(store.now());
	for (let i = 0; i < count; i++) {
		const l = learners[Math.floor(store.rng.next() * learners.length)];
		const c = contents[Math.floor(store.rng.next() * contents.length)];
		const status: CompletionStatus =
			c.contenttype === 'Video' || c.contenttype === 'Resource' ? 'Viewed' : 'Completed';
		const cert = certificate(c, l.id, status, now);
		const id = store.next('completionId');
		store.feed.put(
			{
				completionid: id,
				userid: l.id,
				contentid: c.id,
				certificateid: cert.certificateid,
				comment: null,
				lastupdated: now,
				timeenrolled: now - 7 * DAY,
				timestarted: now - 6 * DAY,
				timecompleted: now,
				expiry: cert.expiry,
				completionstatus: status,
			},
			now,
			0,
		);
	}
	store.dirty();
	return store.feed.size;
}
