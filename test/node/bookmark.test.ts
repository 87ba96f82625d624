import { json, pairedItems, setUpNodeTests, type NodeTestContext } from './setup';

let t: NodeTestContext;
let learners: string[];
let courseIds: number[];

beforeAll(async () => {
	t = await setUpNodeTests('bookmark');
	const demo = await t.sandbox.control.demo();
	learners = demo.users.filter((u) => !u.deleted).map((u) => u.username);
	courseIds = demo.content.filter((c) => c.contenttype === 'Course' && !c.deleted).map((c) => c.id);
});
afterAll(async () => await t.close());

const bookmark = (extra: Record<string, unknown> = {}) => ({
	resource: 'bookmark',
	operation: 'create',
	username: '={{ $json.username }}',
	contentId: '={{ $json.contentId }}',
	contentType: 'course',
	...extra,
});

describe('bookmark: create', () => {
	test('one bookmark per input item, each paired to its item', async () => {
		const items = [0, 1, 2].map((i) => ({
			json: { username: learners[i], contentId: courseIds[i] },
		}));
		const result = await t.run(bookmark(), { items });
		expect(result.error).toBeUndefined();
		const bookmarks = json(result);
		expect(bookmarks).toHaveLength(3);
		expect(pairedItems(result)).toEqual([0, 1, 2]);
		bookmarks.forEach((created, i) => {
			expect(created).toMatchObject({
				id: expect.any(Number),
				userid: expect.any(Number),
				bookmarkable_type: 'course',
				bookmarkable_id: courseIds[i],
				created_at: expect.stringMatching(/Z$/),
				// what the user gave, beside the platform's numeric userid
				username: learners[i],
				contentId: courseIds[i],
				contentType: 'course',
			});
		});
		const posts = (await t.requests('/bookmarks/')).filter((r) => r.method === 'POST');
		expect(posts).toHaveLength(3);
		expect(posts.every((r) => r.status === 200)).toBe(true);
	});

	test("an unknown user is the server's 404, with the item index; continueOnFail keeps going", async () => {
		const items = [
			{ json: { username: 'no-such-learner', contentId: courseIds[0] } },
			{ json: { username: learners[3], contentId: courseIds[1] } },
		];
		const failed = await t.run(bookmark(), { items });
		expect(failed.error?.httpCode).toBe('404');
		// worded for this operation, with the platform's own words saying which one it did not find
		expect(failed.error?.message).toBe(
			`No learner "no-such-learner" or no course with ID ${courseIds[0]} on this tenancy (404: User not found.)`,
		);
		expect(failed.error?.message).not.toContain('does not exist on tenancy');
		expect(failed.error?.description).toContain('username');
		expect(failed.error?.context?.itemIndex).toBe(0);

		const continued = await t.run(bookmark(), { items, continueOnFail: true });
		expect(continued.error).toBeUndefined();
		const outputs = json(continued);
		expect(outputs[0]).toEqual({ error: expect.stringContaining('No learner "no-such-learner"') });
		expect(outputs[1]).toMatchObject({ bookmarkable_id: courseIds[1] });
		expect(pairedItems(continued)).toEqual([0, 1]);
	});

	test('a missing username or a non-numeric content ID fails before any request', async () => {
		const before = (await t.requests('/bookmarks/')).length;
		const noUser = await t.run(bookmark(), {
			items: [{ json: { username: ' ', contentId: courseIds[0] } }],
		});
		expect(noUser.error?.message).toBe('"Username" is required');
		const nullUser = await t.run(bookmark(), {
			items: [{ json: { username: null, contentId: courseIds[0] } }],
		});
		expect(nullUser.error?.message).toBe('"Username" is required');
		const badId = await t.run(bookmark(), {
			items: [{ json: { username: learners[0], contentId: 'course-7' } }],
		});
		expect(badId.error?.message).toBe(
			'"Content ID" must be a positive whole number, got "course-7"',
		);
		expect((await t.requests('/bookmarks/')).length).toBe(before);
	});

	test("a content type that does not match the content is the server's 404", async () => {
		const result = await t.run(bookmark({ contentType: 'video' }), {
			items: [{ json: { username: learners[0], contentId: courseIds[0] } }],
		});
		expect(result.error?.httpCode).toBe('404');
		expect(result.error?.message).toBe(
			`No learner "${learners[0]}" or no video with ID ${courseIds[0]} on this tenancy (404: Content not found.)`,
		);
	});
});
