/**
 * Asynchronous reports (spec operations 2-4 and "Asynchronous rules"): activity completions,
 * attendance and content.
 *
 * - A call without `requestid` submits a request: `Processing` + a new `requestid`.
 * - Polling with `requestid` returns `Processing` until the request is done, then `Complete` with
 *   `data`. Done = polled `reportReadyAfterPolls` times (default 2) AND `reportReadyAfterMs`
 *   elapsed since submission (default 0). With both at 0 the submission itself is `Complete`.
 * - The filters are those of the submission; a poll's other query parameters are ignored.
 *   The data is computed once, when the request first turns Complete, and then stays the same.
 * - Activity completions without `userId` and `contentId`: HTTP 200, `Failed`, `requestid`,
 *   `errors.exception`. Other invalid parameters: HTTP 200 `Failed` with `errors.<param>` arrays.
 * - An unknown `requestid` (or one submitted by another API user or for another report):
 *   HTTP 200 `Failed` with `errors.requestid`.
 */
import { contentData, sessionData, userData } from './fields';
import type { Ctx, Reply } from './http';
import { json } from './http';
import type { Store } from './store';
import type { CompletionData, ReportKind, ReportRequest } from './types';
import { floorToSecond, isoOffset, isTrue, toInt } from './util';

const ACTIVITY_CONTENT_TYPES = ['Course', 'Live Learning'];
export const CONTENT_REPORT_TYPES = ['course', 'live learning', 'resource', 'video'];

function validate(kind: ReportKind, q: URLSearchParams): Record<string, unknown> | null {
	const errors: Record<string, unknown> = {};
	const ints =
		kind === 'activitycompletions' ? ['activityId', 'contentId', 'userId'] : ['contentId'];
	for (const p of ints) {
		const v = toInt(q.get(p));
		if (v !== null && (Number.isNaN(v) || v < 1))
			errors[p] = [`The ${p} must be a positive integer.`];
	}
	const ct = q.get('contentType');
	if (kind === 'activitycompletions') {
		if (ct && !ACTIVITY_CONTENT_TYPES.some((t) => t.toLowerCase() === ct.toLowerCase()))
			errors.contentType = [
				`The selected contentType is invalid. Allowed values: ${ACTIVITY_CONTENT_TYPES.join(', ')}.`,
			];
		if (!q.get('userId') && !q.get('contentId'))
			errors.exception = 'Either a userId or a contentId filter is required.';
	}
	if (kind === 'content' && ct && !CONTENT_REPORT_TYPES.includes(ct.toLowerCase()))
		errors.contentType = [
			`The selected contentType is invalid. Allowed values: ${CONTENT_REPORT_TYPES.join(', ')}.`,
		];
	return Object.keys(errors).length ? errors : null;
}

const isReady = (store: Store, r: ReportRequest) =>
	r.polls >= store.config.reportReadyAfterPolls &&
	store.now() - r.submittedAt >= store.config.reportReadyAfterMs;

function envelope(store: Store, r: ReportRequest): Reply {
	if (r.errors) return json(200, { status: 'Failed', requestid: r.id, errors: r.errors });
	if (!isReady(store, r)) return json(200, { status: 'Processing', requestid: r.id });
	r.data ??= compute(store, r.kind, new URLSearchParams(r.params));
	return json(200, { status: 'Complete', requestid: r.id, data: r.data });
}

export function report(ctx: Ctx, kind: ReportKind): Reply {
	const { store } = ctx.sb;
	const owner = ctx.user!.username;
	const rid = ctx.query.get('requestid');
	if (rid !== null && rid !== '') {
		const id = toInt(rid);
		const r = id !== null && !Number.isNaN(id) ? store.reports.get(id) : undefined;
		if (!r || r.owner !== owner || r.kind !== kind)
			return json(200, {
				status: 'Failed',
				requestid: Number.isNaN(id) ? rid : id,
				errors: { requestid: ['The requestid is unknown.'] },
			});
		if (!r.errors) r.polls++;
		store.dirty();
		return envelope(store, r);
	}
	const params = Object.fromEntries(ctx.query);
	const r: ReportRequest = {
		id: store.next('requestId'),
		owner,
		kind,
		params,
		submittedAt: store.now(),
		polls: 0,
		errors: validate(kind, ctx.query),
	};
	store.reports.set(r.id, r);
	store.dirty();
	return envelope(store, r);
}

// ---- data ------------------------------------------------------------------------------------

function compute(store: Store, kind: ReportKind, q: URLSearchParams): unknown[] {
	if (kind === 'activitycompletions') return activityCompletions(store, q);
	if (kind === 'attendance') return attendance(store, q);
	return content(store, q);
}

/** Activity completions are derived from the completion records: a completed course has all its activities completed, one in progress some of them. */
function activityCompletions(store: Store, q: URLSearchParams): unknown[] {
	const userId = toInt(q.get('userId'));
	const contentId = toInt(q.get('contentId'));
	const activityId = toInt(q.get('activityId'));
	const ct = q.get('contentType')?.toLowerCase();
	const showSuspended = isTrue(q.get('showSuspended'));
	const withUser = isTrue(q.get('userFields'));
	const out: { t: number; rec: Record<string, unknown> }[] = [];
	for (const rec of store.feed.current()) {
		if (userId !== null && rec.userid !== userId) continue;
		if (contentId !== null && rec.contentid !== contentId) continue;
		const learner = store.learners.get(rec.userid);
		const c = store.contents.get(rec.contentid);
		if (!learner || !c || learner.deleted || c.deleted) continue;
		if (learner.suspended && !showSuspended) continue;
		if (!ACTIVITY_CONTENT_TYPES.includes(c.contenttype)) continue;
		if (ct && c.contenttype.toLowerCase() !== ct) continue;
		const done = completedActivities(rec, c.activities.length);
		if (done === 0 || rec.timestarted === null) continue;
		const end = rec.timecompleted ?? rec.lastupdated;
		c.activities.slice(0, done).forEach((a, i) => {
			if (activityId !== null && a.id !== activityId) return;
			const t = floorToSecond(
				rec.timestarted! + ((end - rec.timestarted!) * (i + 1)) / c.activities.length,
			);
			const row: Record<string, unknown> = {
				userid: learner.id,
				username: learner.username,
				activityid: a.id,
				activityname: a.name,
				activitytimecompleted: isoOffset(t),
				activitycompletionstatus: 'Completed',
				contentid: c.id,
				contenttype: c.contenttype,
				contentname: c.fullname,
			};
			if (withUser) row.userdata = userData(learner);
			out.push({ t, rec: row });
		});
	}
	return out.sort((a, b) => a.t - b.t).map((x) => x.rec);
}

function completedActivities(rec: CompletionData, n: number): number {
	if (rec.completionstatus === 'Completed' || rec.completionstatus === 'Archived') return n;
	if (rec.completionstatus === 'In Progress') return n <= 1 ? 1 : 1 + (rec.completionid % (n - 1));
	return 0;
}

function attendance(store: Store, q: URLSearchParams): unknown[] {
	const contentId = toInt(q.get('contentId'));
	const showSuspended = isTrue(q.get('showSuspended'));
	const [wu, wc, ws] = ['userFields', 'contentFields', 'sessionFields'].map((p) =>
		isTrue(q.get(p)),
	);
	const out: unknown[] = [];
	for (const a of store.attendance) {
		if (contentId !== null && a.contentid !== contentId) continue;
		const learner = store.learners.get(a.userid);
		const c = store.contents.get(a.contentid);
		const s = c?.sessions.find((x) => x.id === a.sessionid);
		if (!learner || !c || !s || learner.deleted || c.deleted) continue;
		if (learner.suspended && !showSuspended) continue;
		const row: Record<string, unknown> = {
			userid: learner.id,
			username: learner.username,
			contentid: c.id,
			sessionid: s.id,
			contenttype: 'Live Learning',
			contentname: c.fullname,
			eventname: s.name,
			sessiontype: s.sessiontype,
			sessionstarttime: isoOffset(s.start),
			sessionendtime: isoOffset(s.end),
			attendancestatus: a.attendancestatus,
			note: a.note,
		};
		if (wu) row.userdata = userData(learner);
		if (wc) row.contentdata = contentData(c);
		if (ws) row.sessiondata = sessionData(s);
		out.push(row);
	}
	return out;
}

function content(store: Store, q: URLSearchParams): unknown[] {
	const contentId = toInt(q.get('contentId'));
	const ct = q.get('contentType')?.toLowerCase();
	const counts = new Map<number, { enrolments: number; completions: number }>();
	for (const rec of store.feed.current()) {
		if (rec.completionstatus === 'Archived' || store.learners.get(rec.userid)?.deleted) continue;
		const k = counts.get(rec.contentid) ?? { enrolments: 0, completions: 0 };
		k.enrolments++;
		if (rec.completionstatus === 'Completed' || rec.completionstatus === 'Viewed') k.completions++;
		counts.set(rec.contentid, k);
	}
	const out: unknown[] = [];
	for (const c of store.contents.values()) {
		if (c.deleted) continue;
		if (contentId !== null && c.id !== contentId) continue;
		if (ct && c.contenttype.toLowerCase() !== ct) continue;
		const k = counts.get(c.id) ?? { enrolments: 0, completions: 0 };
		out.push({
			fullname: c.fullname,
			contentid: c.id,
			contenttype: c.contenttype,
			description: c.description,
			summary: c.summary,
			totalenrolments: k.enrolments,
			totalcompletions: k.completions,
			status: c.status,
			cost: c.cost,
			duration: c.duration,
			programs: c.programs,
			category: c.category,
			tags: c.tags,
			customfields: c.customfields.map((f) => ({ ...f })),
			timecreated: isoOffset(c.timecreated),
			timemodified: isoOffset(c.timemodified),
			paymentCost: {
				finalCost: c.cost,
				applicationId: 1,
				discount: {
					success: false,
					errors: 'No discount found for this content.',
					discount: null,
					discountedPrice: c.cost,
					originalPrice: c.cost,
					discountedAmount: 0,
					currency: 'GBP',
				},
			},
		});
	}
	return out;
}
