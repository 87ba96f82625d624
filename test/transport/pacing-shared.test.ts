/**
 * Pacing when another tool (or another n8n process) uses the same API user: its requests are
 * invisible until the server's answers reveal them (X-RateLimit-Remaining, 429 + Retry-After);
 * no item may fail because of them.
 *
 * Real HTTP to the sandbox, on virtual time: every wait of the transport moves the sandbox's
 * clock (and so its rate-limit window) forward by as much, so the minute takes no real time.
 * test/transport/pacing.test.ts is the one pacing test that waits for the real window.
 */
import { useClock, type Clock } from '../../nodes/shared/transport/clock';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { executeNode } from '../support/n8n';
import {
	exchangeElsewhere,
	newCredential,
	outputOf,
	probe,
	rawGet,
	roots,
	withPair,
	type ProbePlan,
} from './helpers';

let sb: SandboxHandle;

beforeAll(async () => {
	sb = await startSandbox({ quiet: true, demoData: false, rateLimitPerMinute: 30 });
});

afterAll(async () => {
	await sb.close();
});

test('another tool used most of the window: our burst waits it out, zero failed items', async () => {
	const { store, username } = await newCredential(sb, 'pace-shared');
	// our credential gets its key and makes one request
	const warm = await executeNode({
		nodeType: probe({ calls: [{ path: '/events' }] }),
		credentials: store,
	});
	expect(outputOf(warm)[0].ok).toBe(true);
	// the other tool rotates (and the new pair lands in our store, as another n8n process would
	// leave it) and then uses 25 of the 30 slots
	const other = await exchangeElsewhere(sb, username, store.data.refreshToken as string);
	expect(other.status).toBe(200);
	store.replace(withPair(store.data, other.json));
	for (let i = 0; i < 25; i++)
		expect((await rawGet(`${roots(sb).webhook}/events`, other.json.api_key)).status).toBe(200);

	const plan: ProbePlan = {
		concurrent: true,
		calls: Array.from({ length: 12 }, () => ({ path: '/events' })),
	};
	// the transport's clock and the sandbox's move on together
	let virtualElapsed = 0;
	const restore = useClock({
		now: () => Date.now() + virtualElapsed,
		sleep: async (ms: number) => {
			virtualElapsed += ms;
			await sb.control.advanceClock(ms);
		},
	} satisfies Clock);
	let result;
	try {
		result = await executeNode({ nodeType: probe(plan), credentials: store });
	} finally {
		restore();
	}
	const out = outputOf(result);
	expect(out).toHaveLength(12);
	expect(out.filter((r) => !r.ok).map((r) => r.error?.message)).toEqual([]);
	// only 4 slots were free: the rest had to wait until the window moved on
	expect(virtualElapsed).toBeGreaterThanOrEqual(50_000);
	const ours = (await sb.control.requests({ username })).filter((r) =>
		r.user_agent?.startsWith('n8n-nodes-learning-platform/'),
	);
	expect(ours.filter((r) => r.status === 200 && r.path.endsWith('/events'))).toHaveLength(13);
});
