import { useSandbox } from './helpers';

const ctx = useSandbox();
let learner: string;
beforeAll(async () => {
	learner = (await ctx.sb.control.demo()).users[0].username;
});

const post = (body: unknown) => ctx.api.send('POST', ctx.api.r.bookmark, body);
const MICROS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/;

describe('create bookmark (operation 5)', () => {
	it('200 {success, bookmark} with the spec fields', async () => {
		const res = await post({ username: learner, contentId: 201, contentType: 'live learning' });
		expect(res.status).toBe(200);
		expect(res.json).toEqual({
			success: true,
			bookmark: {
				id: expect.any(Number),
				userid: 2,
				bookmarkable_type: 'live_learning',
				bookmarkable_id: 201,
				central_content_id: expect.any(Number),
				created_at: expect.stringMatching(MICROS_Z),
				updated_at: expect.stringMatching(MICROS_Z),
			},
		});
		expect(res.json.bookmark.central_content_id).not.toBe(201);
	});

	it('is idempotent per user and content; contentType is case-insensitive', async () => {
		const a = await post({ username: learner, contentId: 102, contentType: 'Course' });
		const b = await post({ username: learner, contentId: 102, contentType: 'COURSE' });
		expect(b.json.bookmark).toEqual(a.json.bookmark);
	});

	it('errors: 422 for missing/invalid fields, 404 for unknown user or content', async () => {
		const missing = await post({});
		expect(missing.status).toBe(422);
		expect(missing.json).toEqual({
			success: false,
			message: expect.any(String),
			errors: {
				username: expect.any(Array),
				contentId: expect.any(Array),
				contentType: expect.any(Array),
			},
		});
		expect(
			(await post({ username: learner, contentId: 'x', contentType: 'course' })).json.errors
				.contentId,
		).toBeDefined();
		const badType = await post({ username: learner, contentId: 101, contentType: 'podcast' });
		expect(badType.status).toBe(422);
		expect(badType.json.errors.contentType[0]).toContain('live learning');
		expect(
			await post({ username: 'no.such.user', contentId: 101, contentType: 'course' }),
		).toMatchObject({ status: 404, json: { success: false, message: 'User not found.' } });
		expect(await post({ username: learner, contentId: 999, contentType: 'course' })).toMatchObject({
			status: 404,
			json: { success: false, message: 'Content not found.' },
		});
		expect((await post({ username: learner, contentId: 301, contentType: 'course' })).status).toBe(
			404,
		); // 301 is a video
	});
});
