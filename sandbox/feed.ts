/**
 * Completions change feed (spec operation 6), `GET {report_root}/completions`.
 *
 * - Records ordered by last change, oldest first (feed positions, see feedLog.ts).
 * - `cursor`: opaque, base64url of `v1:<position>`; records the position only (rule 4), never
 *   expires; malformed or beyond the newest position -> `errors.cursor`.
 * - `updatedSince`: strict `YYYY-MM-DDThh:mm:ssZ`; only records with `lastupdated` >= it.
 *   With a cursor both apply (intersection: the later position wins, rule 5).
 * - `limit` 1..500, default 50. `next_cursor`/`next_page_url` are null exactly when nothing
 *   (matching the filters) lies beyond the page; `next_page_url` is absolute and repeats the
 *   full query with the new cursor. `prev_page_url` is always null.
 * - Filters: `contentId`, `contentType` (case-insensitive), `showSuspended`. Default: completed
 *   records only (`Completed`, `Viewed`, `Archived`, and `Did Not Complete` when the tenancy's
 *   did-not-complete feature is on). `Enrolled`/`In Progress` records: Course with
 *   `includeEnrolments` or `showNotCompleted`, Live Learning with `showNotCompleted`, never
 *   Video/Resource.
 * - Validation failures: HTTP 200 `{status: "Failed", errors: {<param>: [messages]}}`.
 */
import { contentData, userData } from './fields';
import type { Ctx, Reply } from './http';
import { json } from './http';
import type { Store } from './store';
import type { CompletionData } from './types';
import { isoOffsetOrEmpty, isoZ, isTrue, parseStrictZ, toInt } from './util';

export const FEED_CONTENT_TYPES = ['course', 'live learning', 'resource', 'video'];
export const MAX_LIMIT = 500;
export const DEFAULT_LIMIT = 50;

export const encodeCursor = (position: number) =>
	Buffer.from(`v1:${position}`).toString('base64url');
export function decodeCursor(cursor: string): number | null {
	if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
	const m = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
	return m ? Number(m[1]) : null;
}

interface Filters {
	contentId: number | null;
	contentType: string | null;
	showSuspended: boolean;
	includeEnrolments: boolean;
	showNotCompleted: boolean;
	didNotComplete: boolean;
}

function matches(store: Store, rec: CompletionData, f: Filters): boolean {
	if (f.contentId !== null && rec.contentid !== f.contentId) return false;
	const c = store.contents.get(rec.contentid);
	const l = store.learners.get(rec.userid);
	if (!c || !l || c.deleted || l.deleted) return false;
	if (f.contentType && c.contenttype.toLowerCase() !== f.contentType) return false;
	if (l.suspended && !f.showSuspended) return false;
	switch (rec.completionstatus) {
		case 'Did Not Complete':
			return f.didNotComplete;
		case 'Enrolled':
		case 'In Progress':
			if (c.contenttype === 'Course') return f.includeEnrolments || f.showNotCompleted;
			if (c.contenttype === 'Live Learning') return f.showNotCompleted;
			return false;
		default:
			return true;
	}
}

/** The wire shape of a completion record. */
export function renderCompletion(
	store: Store,
	rec: CompletionData,
	withUser = false,
	withContent = false,
): Record<string, unknown> {
	const c = store.contents.get(rec.contentid)!;
	const l = store.learners.get(rec.userid)!;
	const out: Record<string, unknown> = {
		completionid: rec.completionid,
		userid: rec.userid,
		username: l.username,
		contentid: rec.contentid,
		contentname: c.fullname,
	};
	// the key is absent (not null) on Video and Resource records
	if (c.contenttype !== 'Video' && c.contenttype !== 'Resource')
		out.certificateid = rec.certificateid;
	Object.assign(out, {
		comment: rec.comment,
		lastupdated: isoZ(rec.lastupdated),
		timeenrolled: isoOffsetOrEmpty(rec.timeenrolled),
		timestarted: isoOffsetOrEmpty(rec.timestarted),
		timecompleted: isoOffsetOrEmpty(rec.timecompleted),
		expiry: isoOffsetOrEmpty(rec.expiry),
		contenttype: c.contenttype,
		completionstatus: rec.completionstatus,
	});
	if (withUser) out.userdata = userData(l);
	if (withContent) out.contentdata = contentData(c);
	return out;
}

export function completionsFeed(ctx: Ctx): Reply {
	const { store } = ctx.sb;
	const q = ctx.query;
	store.feed.promote(store.now());
	const errors: Record<string, string[]> = {};

	let since: number | null = null;
	const us = q.get('updatedSince');
	if (us !== null && us !== '') {
		since = parseStrictZ(us);
		if (since === null)
			errors.updatedSince = [
				'The updatedSince must be a UTC date and time in the format YYYY-MM-DDThh:mm:ssZ.',
			];
	}
	let limit = DEFAULT_LIMIT;
	const lim = toInt(q.get('limit'));
	if (lim !== null) {
		if (Number.isNaN(lim)) errors.limit = ['The limit must be an integer.'];
		else if (lim > MAX_LIMIT) errors.limit = [`The limit must be at most ${MAX_LIMIT}.`];
		else if (lim < 1) errors.limit = ['The limit must be at least 1.'];
		else limit = lim;
	}
	let position = 0;
	const cur = q.get('cursor');
	if (cur !== null && cur !== '') {
		const p = decodeCursor(cur);
		if (p === null || p > store.feed.seq)
			errors.cursor = ['The cursor is invalid. Restart from updatedSince.'];
		else position = p;
	}
	const ct = q.get('contentType');
	if (ct && !FEED_CONTENT_TYPES.includes(ct.toLowerCase()))
		errors.contentType = [
			`The selected contentType is invalid. Allowed values: ${FEED_CONTENT_TYPES.join(', ')}.`,
		];
	const contentId = toInt(q.get('contentId'));
	if (contentId !== null && Number.isNaN(contentId))
		errors.contentId = ['The contentId must be an integer.'];
	if (Object.keys(errors).length) return json(200, { status: 'Failed', errors });

	const f: Filters = {
		contentId,
		contentType: ct ? ct.toLowerCase() : null,
		showSuspended: isTrue(q.get('showSuspended')),
		includeEnrolments: isTrue(q.get('includeEnrolments')),
		showNotCompleted: isTrue(q.get('showNotCompleted')),
		didNotComplete: store.config.didNotCompleteEnabled,
	};
	const withUser = isTrue(q.get('userFields'));
	const withContent = isTrue(q.get('contentFields'));

	const entries = store.feed.entries;
	const data: Record<string, unknown>[] = [];
	let last = position;
	let more = false;
	for (let i = store.feed.indexAfter(position); i < entries.length; i++) {
		const e = entries[i];
		if (!e.alive) continue;
		if (since !== null && e.rec.lastupdated < since) continue;
		if (!matches(store, e.rec, f)) continue;
		if (data.length === limit) {
			more = true;
			break;
		}
		data.push(renderCompletion(store, e.rec, withUser, withContent));
		last = e.seq;
	}
	let nextCursor: string | null = null;
	let nextUrl: string | null = null;
	if (more) {
		nextCursor = encodeCursor(last);
		const params = new URLSearchParams(q);
		params.set('cursor', nextCursor);
		nextUrl = `${ctx.baseUrl}${ctx.path}?${params.toString()}`;
	}
	return json(200, {
		status: 'Complete',
		data,
		next_cursor: nextCursor,
		next_page_url: nextUrl,
		prev_page_url: null,
	});
}
