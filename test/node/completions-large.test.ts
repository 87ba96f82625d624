import { json, setUpNodeTests, type NodeTestContext } from './setup';

/**
 * A first sync of a large tenancy: Return All over 150,000 feed records in one execution. The
 * benchmark found that 150,000 items overflowed the call stack when appended with a spread.
 */
let t: NodeTestContext;
const TOTAL = 150_000;

beforeAll(async () => {
	t = await setUpNodeTests('completions-large', { demoData: false, rateLimitPerMinute: 100_000 });
	await t.sandbox.control.generateFeed(TOTAL);
});
afterAll(async () => await t.close());

test('Return All outputs all 150,000 records of the feed, each once', async () => {
	const result = await t.run({
		resource: 'completion',
		operation: 'getMany',
		returnAll: true,
		options: { showSuspended: true },
	});
	expect(result.error).toBeUndefined();
	const records = json(result);
	expect(records).toHaveLength(TOTAL);
	expect(new Set(records.map((r) => r.completionid)).size).toBe(TOTAL);
	expect((await t.requests('/completions')).length).toBe(TOTAL / 500);
}, 180_000);
