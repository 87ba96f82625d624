/**
 * Create bookmark (spec operation 5), `POST {bookmark_root}` with `{username, contentId, contentType}`.
 *
 * 200 `{success: true, bookmark: {id, userid, bookmarkable_type, bookmarkable_id,
 * central_content_id, created_at, updated_at}}`. Choices where the spec shows nothing:
 * - allowed `contentType` (case-insensitive): `course`, `live learning`, `video`, `resource`;
 *   `bookmarkable_type` is the matching snake_case kind (`course`, `live_learning`, `video`, `resource`);
 * - `central_content_id` is the content's id in the central catalogue (a different number);
 * - missing/invalid fields -> 422 `{success: false, message, errors: {field: [..]}}`;
 *   unknown (or deleted) username -> 404 `{success: false, message: "User not found."}`;
 *   unknown content, or content of another type -> 404 `{success: false, message: "Content not found."}`;
 * - bookmarking the same content twice for a user returns the existing bookmark (200, idempotent).
 */
import type { Ctx, Reply } from './http';
import { json } from './http';
import type { Bookmark } from './types';
import { isoMicrosZ, toInt } from './util';

export const BOOKMARK_CONTENT_TYPES = ['course', 'live learning', 'video', 'resource'];

function render(b: Bookmark) {
	return { ...b, created_at: isoMicrosZ(b.created_at), updated_at: isoMicrosZ(b.updated_at) };
}

export function createBookmark(ctx: Ctx): Reply {
	const { store } = ctx.sb;
	const body = ctx.body ?? {};
	const errors: Record<string, string[]> = {};
	const username = body.username;
	const contentId = toInt(body.contentId);
	const contentType = body.contentType;
	if (typeof username !== 'string' || username.trim() === '')
		errors.username = ['The username field is required.'];
	if (contentId === null) errors.contentId = ['The contentId field is required.'];
	else if (Number.isNaN(contentId)) errors.contentId = ['The contentId must be an integer.'];
	if (typeof contentType !== 'string' || contentType.trim() === '')
		errors.contentType = ['The contentType field is required.'];
	else if (!BOOKMARK_CONTENT_TYPES.includes(contentType.toLowerCase()))
		errors.contentType = [
			`The selected contentType is invalid. Allowed values: ${BOOKMARK_CONTENT_TYPES.join(', ')}.`,
		];
	if (Object.keys(errors).length) {
		const message = Object.values(errors)[0][0];
		return json(422, { success: false, message, errors });
	}
	const learner = [...store.learners.values()].find(
		(l) => l.username === (username as string) && !l.deleted,
	);
	if (!learner) return json(404, { success: false, message: 'User not found.' });
	const content = store.contents.get(contentId!);
	if (
		!content ||
		content.deleted ||
		content.contenttype.toLowerCase() !== (contentType as string).toLowerCase()
	)
		return json(404, { success: false, message: 'Content not found.' });
	const existing = store.bookmarks.find(
		(b) => b.userid === learner.id && b.bookmarkable_id === content.id,
	);
	if (existing) return json(200, { success: true, bookmark: render(existing) });
	const now = store.now();
	const b: Bookmark = {
		id: store.next('bookmarkId'),
		userid: learner.id,
		bookmarkable_type: content.contenttype.toLowerCase().replace(' ', '_'),
		bookmarkable_id: content.id,
		central_content_id: content.centralId,
		created_at: now,
		updated_at: now,
	};
	store.bookmarks.push(b);
	store.dirty();
	return json(200, { success: true, bookmark: render(b) });
}
