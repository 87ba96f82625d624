// The Google Sheets recipes of demo/workflows, run as a user imports them, with n8n's own Google
// Sheets node (n8n-nodes-base, unchanged) writing to a stand-in of Google's Sheets API v4
// (test/support/googleSheets/) that answers as Google does, 60 reads and 60 writes a minute per
// user and 503 while "down" included. n8n reaches it the way n8n allows: its HTTPS_PROXY setting
// (the stand-in is the proxy; it opens tunnels to sheets.googleapis.com:443 only) and a CA trusted
// through NODE_EXTRA_CA_CERTS; the node calls https://sheets.googleapis.com with its credential's
// token as it would in production. Each recipe file is loaded from disk unchanged but for what a
// user supplies after "Import from File" (recipeSupport.ts, `asImported`).
//
// One n8n (SQLite) with the sandbox API and the TLS front; one Google account (one quota) for all
// recipes, as an HR team has. Time that a real outage would take is moved instead of waited:
// n8n's clock (clock-offset.cjs, read again while it runs), the platform's and Google's move
// together, so a recipe's wait of 4 to 6 minutes or Google's 10-minute outage passes in the time
// n8n needs to notice (its wait tracker looks every 60 s). The platform waits up to a minute for
// n8n's answer to a delivery (the sandbox's default, 5 s, times out answers of two busy cores in a
// burst, and the platform's retries and the trigger's repeat handling are webhookScale.test.ts's
// subject). In order:
// 1. webhook recipe, 30 completions in the same second while the Google account has 5 writes left
//    this minute: one row each for those written, the refused runs wait;
// 2. webhook recipe, n8n stopped while those runs wait and 10 completions happen (the platform
//    gives up on each): after the start the trigger's recovery brings the 10, and the waiting runs
//    write their rows when their wait is over: one row per completion;
// 3. webhook recipe, Google Sheets down 10 minutes while 5 completions happen: their runs wait,
//    try again (still down), wait again, and write when it is back; a copy of the recipe set to give
//    up after one more try stops with its error instead;
// 4. polling recipe (the sheet is its bookmark), across all of the above: one row per completion,
//    a changed record updates its row (the webhook recipe's row stays); the Completion Trigger
//    (the sandbox demo's feed sync) emitted each completion once across the restart, the clock
//    moves (after which n8n's cron can start two polls at once) and a poll that outlasted its
//    interval (the platform held its read 70 s: the next poll started meanwhile emitted nothing);
// 5. catch-up recipe: two rows deleted from the webhook sheet come back, nothing doubles;
// 6. weekly report (`n8n execute` on a clock a week ahead, then three weeks on): a week column, each
//    completion counted once in its week, a run twice counts nothing twice, a missed Monday leaves
//    no gap.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DateTime } from 'luxon';
import { ProxyAgent, request } from 'undici';
import {
	executionError,
	log,
	sandboxCredential,
	nodeOutput,
	REPO_ROOT,
	scaled,
	startStack,
	type ExecutionSummary,
	type Stack,
	type WorkflowJson,
} from '../../scripts/n8n';
import { waitFor } from '../sandbox/helpers';
import { GoogleSheetsStandIn, SHEETS_HOST } from '../support/googleSheets/standIn';
import {
	demoData,
	executionsSummary,
	landed,
	sleep,
	stopAndReport,
	TYPES,
	webhookDeliveriesSettled,
	type DemoData,
} from './helpers';
import {
	asImported,
	feedRecords,
	googleCredential,
	headerOf,
	recipeFile,
	shown,
	type FeedRecord,
	type Recipe,
	type SheetChoice,
} from './recipeSupport';

jest.setTimeout(900_000);
landed();

/** n8n's time zone here (GENERIC_TIMEZONE), as docs/installation.md's compose file sets it. */
const ZONE = 'Europe/London';
/** The webhook recipe's wait after a refused write: 4 to 6 minutes. */
const RECIPE_WAIT_MAX_MS = 6 * 60_000;
/**
 * One move of the clocks: past the recipe's longest wait, and not a whole number of minutes. A move
 * of whole minutes lands n8n's pending cron ticks on their second, where cron 4.4.0 can start one
 * tick twice a moment apart (docs/design.md, "The Completion Trigger's position in the feed"); a
 * resumed machine's clock lands anywhere, and the Completion Trigger's overlap is step 4's held read.
 */
const CLOCK_MOVE_MS = RECIPE_WAIT_MAX_MS + 30_000;
const GOOGLE_OUTAGE_MS = 10 * 60_000;
const BURST = 30;
const MISSED = 10;
const DURING_OUTAGE = 5;
const WEEK_MS = 7 * 86_400_000;
const FEED_SYNC_FILE = 'feed-sync.json';
/** The demo feed sync's Completion Trigger node. */
const FEED_TRIGGER = 'New or changed completions';
/** The feed sync's API user (one per workflow, below). */
const FEED_SYNC_USER = 'e2e-recipefeedsync';
/** How long the platform holds one feed read of the Completion Trigger: past its next tick. */
const HELD_READ_MS = 70_000;

describe("the Google Sheets recipes with n8n's own Google Sheets node", () => {
	const suiteStart = Date.now();
	const report: Record<string, unknown> = {};
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-e2e-sheets-'));
	const token = `ya29.${randomBytes(24).toString('base64url')}`;
	const standIn = new GoogleSheetsStandIn({ dir: path.join(dir, 'google'), token });
	let stack: Stack;
	let demo: DemoData & { activeLearners: DemoData['users'] };
	/** distinct (active learner, course) pairs: each completion has its own completion id */
	let pairs: Array<{ userId: number; contentId: number }> = [];
	/** every completion this file made, in order */
	const fired: number[] = [];
	const workflowIds = {} as Record<Recipe | 'giveUp' | 'feedSync', string>;
	const sheets = {} as Record<'webhook' | 'giveUp' | 'poll' | 'report', string>;
	/** how far n8n's, the platform's and Google's clocks were moved ahead */
	let movedMs = 0;

	const control = () => stack.sandbox!.control;
	const webhookRows = () => standIn.records(sheets.webhook, 'Course completions');

	/** Time passes faster: n8n's, the platform's and Google's clocks move `ms` ahead together. */
	async function moveClocks(ms: number): Promise<void> {
		standIn.advanceClock(ms);
		await control().advanceClock(ms);
		await stack.host.moveClock(ms);
		movedMs += ms;
	}

	/** `n` completions at once (same second), each a new completion id. */
	async function completeAtOnce(n: number): Promise<number[]> {
		const chosen = pairs.splice(0, n);
		if (chosen.length < n) throw new Error('out of learner/course pairs');
		const ids = (await Promise.all(chosen.map((pair) => control().simulateCompletion(pair)))).map(
			(r) => r.completion.completionid,
		);
		fired.push(...ids);
		return ids;
	}

	const executionsOf = (workflow: keyof typeof workflowIds, includeData = false) =>
		stack.client.listExecutions({ workflowId: workflowIds[workflow], includeData });

	/** Until a workflow has `count` executions, each finished or waiting. */
	async function untilSettled(
		workflow: keyof typeof workflowIds,
		count: number,
		timeoutMs: number,
		what: string,
	): Promise<ExecutionSummary[]> {
		let statuses = '';
		return waitFor(
			async () => {
				const executions = await executionsOf(workflow);
				statuses = executions.map((e) => e.status).join(',');
				return (
					executions.length >= count &&
					executions.every((e) => ['success', 'error', 'waiting'].includes(e.status)) &&
					executions
				);
			},
			scaled(timeoutMs),
			() => `${what}: ${count} executions finished or waiting (statuses: ${statuses})`,
			1000,
		);
	}

	/**
	 * Until the webhook sheet holds a row for each of `ids`, moving the clocks by the recipe's
	 * longest wait whenever every run of the webhook recipe has finished or waits: runs that come
	 * back together can meet the quota again and wait once more, as they would over real minutes.
	 * Returns how often the clocks were moved.
	 */
	async function untilRowsAfterWaits(ids: number[], what: string): Promise<number> {
		let moves = 0;
		const deadline = Date.now() + scaled(600_000);
		for (;;) {
			const have = new Set(webhookRows().map((row) => row['Completion ID']));
			const missing = ids.filter((id) => !have.has(String(id)));
			if (missing.length === 0) return moves;
			const executions = await executionsOf('webhook');
			const idle = executions.every((e) => ['success', 'error', 'waiting'].includes(e.status));
			const waiting = executions.filter((e) => e.status === 'waiting');
			// a wait not yet over on n8n's clock (one that is over is the wait tracker's to resume)
			const notDue = waiting.some((e) => Date.parse(String(e.waitTill)) > Date.now() + movedMs);
			if (idle && notDue) {
				if (moves === 5) throw new Error(`${what}: still waiting after 5 moves of the clocks`);
				await moveClocks(CLOCK_MOVE_MS);
				moves++;
				// n8n's wait tracker looks every 60 s: give the runs time to come back
				await waitFor(
					async () =>
						(await executionsOf('webhook')).filter((e) => e.status === 'waiting').length <
						waiting.length,
					scaled(180_000),
					`${what}: the waiting runs to come back`,
					1000,
				);
			}
			if (Date.now() > deadline)
				throw new Error(`${what}: rows for ${missing.join(', ')} (runs: ${executions.length})`);
			await sleep(1000);
		}
	}

	/** Exactly one row per completion of `ids` in the webhook sheet, and no other row. */
	function expectOneRowEach(ids: number[]) {
		const keys = webhookRows().map((row) => row['Completion ID']);
		expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
		expect([...keys].sort()).toEqual(ids.map(String).sort());
	}

	/** Requests with the Google account's token from outside n8n: its other use of Sheets. */
	async function spendWrites(n: number): Promise<void> {
		const scratch = standIn.createSpreadsheet('Elsewhere', [{ title: 'Sheet1', header: ['n'] }]);
		const agent = new ProxyAgent({
			uri: standIn.proxyUrl,
			requestTls: { ca: fs.readFileSync(standIn.caFile, 'utf8') },
		});
		try {
			for (let i = 0; i < n; i++) {
				const response = await request(
					`https://${SHEETS_HOST}/v4/spreadsheets/${scratch}/values/Sheet1!A:A:append?valueInputOption=RAW`,
					{
						method: 'POST',
						dispatcher: agent,
						headers: { authorization: `Bearer ${token}` },
						body: JSON.stringify({ values: [[i]] }),
					},
				);
				await response.body.dump();
				if (response.statusCode !== 200) throw new Error(`spending writes: ${response.statusCode}`);
			}
		} finally {
			await agent.close();
		}
	}

	beforeAll(async () => {
		await standIn.start();
		stack = await startStack({
			name: 'e2e-recipes',
			sandbox: true,
			clockOffsetFile: path.join(dir, 'clock-offset'),
			n8nEnv: {
				HTTPS_PROXY: standIn.proxyUrl,
				NO_PROXY: '127.0.0.1,localhost,::1',
				NODE_EXTRA_CA_CERTS: standIn.caFile,
				GENERIC_TIMEZONE: ZONE,
			},
		});
		await control().setConfig({ deliveryTimeoutMs: 60_000 });
		const ids: Record<keyof typeof workflowIds, string> = {
			webhook: 'recipeWebhook',
			giveUp: 'recipeGiveUp',
			poll: 'recipePoll',
			report: 'recipeReport',
			catchUp: 'recipeCatchUp',
			feedSync: 'recipeFeedSync',
		};
		// one import (each is a whole n8n start): a fresh API user per workflow, and the Google account
		const users = await Promise.all(
			Object.values(ids).map((id) => control().issueRefreshToken(`e2e-${id.toLowerCase()}`)),
		);
		await stack.host.importCredentials([
			...Object.values(ids).map((id, i) => sandboxCredential(id, `e2e ${id}`, users[i])),
			googleCredential('recipeGoogle', token),
		]);

		// the spreadsheets, each first row as the README says (the recipe's columns, in order)
		const webhookHeader = headerOf(recipeFile('webhook'), 'Add or update row');
		const report = recipeFile('report');
		sheets.webhook = standIn.createSpreadsheet('Course completions', [
			{ title: 'Course completions', header: webhookHeader },
		]);
		sheets.giveUp = standIn.createSpreadsheet('Course completions (a copy)', [
			{ title: 'Course completions', header: webhookHeader },
		]);
		sheets.poll = standIn.createSpreadsheet('Completions (every minute)', [
			{ title: 'Completions', header: headerOf(recipeFile('poll'), 'Add or update row') },
		]);
		sheets.report = standIn.createSpreadsheet('Weekly report', [
			{ title: 'Completions', header: headerOf(report, 'Completions, with their week') },
			{ title: 'Weekly totals', header: headerOf(report, 'Weekly totals') },
		]);
		const choose = (
			recipe: Recipe,
			credential: string,
			chosen: Record<string, SheetChoice>,
			edit?: Parameters<typeof asImported>[1]['edit'],
		) =>
			asImported(recipe, {
				learningPlatform: credential,
				google: 'recipeGoogle',
				sheets: chosen,
				standIn,
				edit,
			});
		const webhookSheet = { spreadsheetId: sheets.webhook, tab: 'Course completions' };
		const pollSheet = { spreadsheetId: sheets.poll, tab: 'Completions' };
		const workflows = {
			webhook: choose('webhook', ids.webhook, { 'Add or update row': webhookSheet }),
			// the recipe, set to give up after one more try instead of a day of them
			giveUp: {
				...choose(
					'webhook',
					ids.giveUp,
					{ 'Add or update row': { spreadsheetId: sheets.giveUp, tab: 'Course completions' } },
					{
						'Tried for less than a day?': (p) =>
							JSON.parse(JSON.stringify(p).replace('"rightValue":288', '"rightValue":1')),
					},
				),
				name: 'Recipe (a copy that gives up after one more try)',
			},
			poll: choose('poll', ids.poll, {
				'Rows already in the sheet': pollSheet,
				'Add or update row': pollSheet,
			}),
			report: choose('report', ids.report, {
				'Completions, with their week': { spreadsheetId: sheets.report, tab: 'Completions' },
				'Weekly totals': { spreadsheetId: sheets.report, tab: 'Weekly totals' },
			}),
			// the catch-up's one setting: when the outage began (here: when this file began)
			catchUp: choose(
				'catchUp',
				ids.catchUp,
				{ 'Add or update row': webhookSheet },
				{
					'When the outage began': (p) => ({
						...p,
						assignments: {
							assignments: [
								{
									id: 'outage',
									name: 'outageBegan',
									type: 'string',
									value: new Date(suiteStart - 60_000).toISOString(),
								},
							],
						},
					}),
				},
			),
			// the sandbox demo's feed sync: the Completion Trigger from "now", every minute
			feedSync: feedSyncWorkflow(ids.feedSync),
		};
		for (const [name, workflow] of Object.entries(workflows))
			workflowIds[name as keyof typeof workflowIds] = (
				await stack.client.createWorkflow(workflow)
			).id;
		for (const name of ['webhook', 'poll', 'feedSync'] as const)
			await stack.client.activate(workflowIds[name]);

		demo = await demoData(stack);
		const learners = demo.activeLearners.map((u) => u.id);
		const courses = demo.content
			.filter((c) => c.contenttype === 'Course' && !c.deleted)
			.map((c) => c.id);
		pairs = courses
			.slice(0, 6)
			.flatMap((contentId) => learners.slice(0, 12).map((userId) => ({ userId, contentId })));
	}, 900_000);

	/** demo/workflows/feed-sync.json with its credential chosen. */
	function feedSyncWorkflow(credential: string) {
		const workflow = JSON.parse(
			fs.readFileSync(path.join(REPO_ROOT, 'demo', 'workflows', FEED_SYNC_FILE), 'utf8'),
		) as WorkflowJson;
		return {
			...workflow,
			nodes: workflow.nodes.map((node) =>
				node.credentials
					? { ...node, credentials: { [TYPES.credential]: { id: credential, name: credential } } }
					: node,
			),
		};
	}

	afterAll(async () => {
		report.google = standIn.summary();
		report.refusedTunnels = standIn.refusedTunnels;
		await standIn.close();
		fs.rmSync(dir, { recursive: true, force: true });
	});
	stopAndReport('e2e-recipes', () => stack, report, suiteStart);

	test(`webhook recipe: ${BURST} completions in the same second while the Google account has 5 writes left this minute: rows for those written, the refused runs wait`, async () => {
		const t0 = Date.now();
		// the same Google account's other use of Sheets took 55 of this minute's 60 writes
		await spendWrites(55);
		const burst = await completeAtOnce(BURST);
		const settled = await untilSettled('webhook', BURST, 300_000, 'the burst');
		const waiting = settled.filter((e) => e.status === 'waiting').map((e) => e.id);
		const written = settled.filter((e) => e.status === 'success').length;
		report.burst = {
			completions: BURST,
			written,
			waitingForTheQuota: waiting.length,
			answered429: standIn.requests.filter((r) => r.status === 429).length,
			rows: webhookRows().length,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: burst ${JSON.stringify(report.burst)}`);

		// the quota refused some runs (the condition was met): they wait, the others wrote their row
		expect(waiting.length).toBeGreaterThan(0);
		expect(settled.filter((e) => e.status === 'error')).toEqual([]);
		expect(webhookRows()).toHaveLength(written);
		const keys = webhookRows().map((row) => row['Completion ID']);
		expect(new Set(keys).size).toBe(keys.length);
		expect(keys.every((key) => burst.map(String).includes(key))).toBe(true);
	});

	test(`webhook recipe: n8n stopped while those runs wait and ${MISSED} completions happen; after the start, one row per completion`, async () => {
		const t0 = Date.now();
		const waitingAtStop = (await executionsOf('webhook'))
			.filter((e) => e.status === 'waiting')
			.map((e) => e.id);
		await stack.main.stop(15_000);
		const downAt = Date.now();
		const whileDown = await completeAtOnce(MISSED);
		await waitFor(
			async () => (await control().pendingDeliveries()).pending === 0,
			scaled(90_000),
			'the platform to give up on the deliveries made while n8n was down',
			500,
		);
		await stack.main.start();
		const downMs = Date.now() - downAt;
		await stack.client.login(stack.owner);
		await stack.client.waitForPublication(workflowIds.webhook, 'published');
		// the first delivery after the start sets off the recovery of what was missed; their runs
		// write (or wait too, while the quota's minute lasts)
		await completeAtOnce(1);
		await untilSettled('webhook', fired.length, 180_000, 'the recovery');
		// the waits of the runs refused by the quota pass (4 to 6 minutes): their rows follow
		const clockMoves = await untilRowsAfterWaits(fired, 'the runs that waited');
		await waitFor(
			async () => webhookDeliveriesSettled(stack, [stack.main]),
			scaled(120_000),
			'the deliveries to settle',
			1000,
		);
		const executions = await untilSettled('webhook', fired.length, 60_000, 'after the recovery');
		const redispatched = (await control().deliveries({ username: 'e2e-recipewebhook' })).filter(
			(a) =>
				whileDown.includes(JSON.parse(a.body).payload?.completion?.id as number) &&
				a.delivery_id !== '' &&
				a.status_code === 200,
		);
		report.recovery = {
			missed: MISSED,
			redispatchedAndAnswered: redispatched.length,
			waitingThroughTheRestart: waitingAtStop.length,
			clockMovesOf6AndAHalfMinutes: clockMoves,
			rows: webhookRows().length,
			completions: fired.length,
			executions: executions.length,
			downMs,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: recovery ${JSON.stringify(report.recovery)}`);

		expect(
			new Set(redispatched.map((a) => JSON.parse(a.body).payload.completion.id as number)),
		).toEqual(new Set(whileDown));
		// runs that waited through the restart carried on
		expect(waitingAtStop.length).toBeGreaterThan(0);
		expect(executions.filter((e) => waitingAtStop.includes(e.id)).map((e) => e.status)).toEqual(
			waitingAtStop.map(() => 'success'),
		);
		expectOneRowEach(fired);
		expect(executionsSummary(executions.filter((e) => e.status !== 'success'))).toBe('');
		// each row is its completion's (the mapping reads the delivery's payload)
		for (const id of fired.slice(0, 3)) {
			const { completion } = await control().completion(id);
			expect(webhookRows().find((row) => row['Completion ID'] === String(id))).toMatchObject({
				Username: completion.username,
				Course: completion.contentname,
				'Completed at': completion.timecompleted,
			});
		}
	});

	test(`webhook recipe: Google Sheets down ${GOOGLE_OUTAGE_MS / 60_000} minutes while ${DURING_OUTAGE} completions happen: the runs wait, try again, wait again, and write when it is back; a copy set to give up stops with its error`, async () => {
		const t0 = Date.now();
		await stack.client.activate(workflowIds.giveUp);
		const before = new Set(
			[...(await executionsOf('webhook')), ...(await executionsOf('giveUp'))].map((e) => e.id),
		);
		const ours = async () =>
			[...(await executionsOf('webhook')), ...(await executionsOf('giveUp'))].filter(
				(e) => !before.has(e.id),
			);
		const outage = standIn.outage(GOOGLE_OUTAGE_MS);
		const during = await completeAtOnce(DURING_OUTAGE);
		// every run (recipe and copy) failed at once and waits
		const waiting = await waitFor(
			async () => {
				const runs = await ours();
				return (
					runs.length === 2 * DURING_OUTAGE && runs.every((e) => e.status === 'waiting') && runs
				);
			},
			scaled(180_000),
			'the runs of the outage to wait',
			1000,
		);
		const firstWait = new Map(waiting.map((e) => [e.id, String(e.waitTill)]));
		// 6.5 minutes on: the waits end while Google is still down; each run tries again and waits again
		await moveClocks(CLOCK_MOVE_MS);
		expect(standIn.isDown()).toBe(true);
		await waitFor(
			async () =>
				(await ours()).every(
					(e) =>
						e.status === 'waiting' &&
						Date.parse(String(e.waitTill)) > Date.parse(firstWait.get(e.id)!),
				),
			scaled(240_000),
			'the runs to try again during the outage and wait again',
			1000,
		);
		// 13 minutes on: Google is back
		await moveClocks(CLOCK_MOVE_MS);
		expect(standIn.isDown()).toBe(false);
		await untilRowsAfterWaits(during, 'after the outage');
		const executions = await untilSettled('webhook', fired.length, 120_000, 'after the outage');
		const gaveUp = await untilSettled('giveUp', DURING_OUTAGE, 120_000, 'the copy');
		await stack.client.deactivate(workflowIds.giveUp);
		const gaveUpWith = await Promise.all(
			gaveUp.map(async (e) => executionError(await stack.client.getExecution(e.id))),
		);
		report.googleOutage = {
			completions: DURING_OUTAGE,
			outageMinutes: (outage.until - outage.from) / 60_000,
			answered503: standIn.requests.filter((r) => r.status === 503).length,
			rows: webhookRows().length,
			copyGaveUp: gaveUp.filter((e) => e.status === 'error').length,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: Google outage ${JSON.stringify(report.googleOutage)}`);

		expectOneRowEach(fired);
		expect(executionsSummary(executions.filter((e) => e.status !== 'success'))).toBe('');
		// the copy: each run stopped with the recipe's message, and wrote nothing
		expect(gaveUp.map((e) => e.status)).toEqual(Array(DURING_OUTAGE).fill('error'));
		for (const message of gaveUpWith)
			expect(message).toMatch(/^Google Sheets refused the row of completion \d+ for a day/);
		expect(standIn.records(sheets.giveUp, 'Course completions')).toEqual([]);
	});

	test('polling recipe (the sheet is its bookmark): one row per completion across all of the above; a changed record updates its row; the Completion Trigger emitted each once, also when a poll outlasted its interval', async () => {
		const t0 = Date.now();
		const pollRows = () => standIn.records(sheets.poll, 'Completions');
		const columns = headerOf(recipeFile('poll'), 'Add or update row');
		const asRow = (record: FeedRecord) =>
			Object.fromEntries(columns.map((c) => [c, shown(record[c])]));
		const changed = fired[0];
		const webhookRowBefore = webhookRows().find((row) => row['Completion ID'] === String(changed));
		const webhookRunsBefore = (await executionsOf('webhook')).length;
		// A poll that outlasts the interval (n8n starts two at once the same way after its clock
		// jumped forward): the platform holds the Completion Trigger's next feed read past its next
		// tick, so n8n starts the next poll while that one runs. It must emit nothing; the held one
		// emits the change.
		const feedSyncReads = async () =>
			await control().requests({ username: FEED_SYNC_USER, path: '/completions' });
		const readsBefore = (await feedSyncReads()).length;
		await control().setFaults([
			{ kind: 'delay', delayMs: HELD_READ_MS, pathPattern: '/completions$' },
		]);
		const { completion: newest } = await control().simulateRecordChange(changed);
		await waitFor(
			async () => (await feedSyncReads()).slice(readsBefore).some((r) => r.status === null),
			scaled(90_000),
			"the Completion Trigger's next feed read (held)",
			250,
		);
		await control().setFaults([]);
		const skipped = /Learning Platform Completion Trigger: .*still running.*skipped/;
		await waitFor(
			async () => stack.main.logLinesSinceStart(skipped).length > 0,
			scaled(90_000),
			'the next poll, started while the held one runs, to be skipped',
			1000,
		);
		await waitFor(
			async () => {
				const rows = pollRows();
				return (
					fired.every((id) => rows.some((row) => row.completionid === String(id))) &&
					rows.find((row) => row.completionid === String(changed))?.lastupdated ===
						newest.lastupdated
				);
			},
			scaled(240_000),
			() =>
				`every completion (${fired.length}) and the change of ${changed} in the polling sheet (it has ${pollRows().length} rows)`,
			1000,
		);
		// the Completion Trigger has emitted the change too
		const emitted = async () => {
			const counts = new Map<number, number>();
			for (const run of await executionsOf('feedSync', true))
				for (const item of nodeOutput(run, FEED_TRIGGER))
					counts.set(
						item.completionid as number,
						(counts.get(item.completionid as number) ?? 0) + 1,
					);
			return counts;
		};
		await waitFor(
			async () => ((await emitted()).get(changed) ?? 0) >= 2,
			scaled(180_000),
			`the Completion Trigger to emit the change of ${changed}`,
			2000,
		);
		// whatever the held poll emits has run once a read started after its answer is answered
		// (n8n's next tick: the held poll emitted before it)
		await waitFor(
			async () => {
				const reads = (await feedSyncReads()).slice(readsBefore);
				const [held] = reads;
				return (
					reads.every((r) => r.status !== null) &&
					reads.some((r) => Date.parse(r.at) > Date.parse(held.at) + HELD_READ_MS)
				);
			},
			scaled(180_000),
			'a feed read of the Completion Trigger after the held one was answered',
			1000,
		);
		for (const name of ['poll', 'feedSync'] as const)
			await stack.client.deactivate(workflowIds[name]);
		const runs = await executionsOf('poll');
		// what the platform holds, changed since the first run's start (its 30 days back)
		const firstRun = Math.min(...runs.map((r) => Date.parse(r.startedAt)));
		const expected = (await feedRecords(stack, demo, fired)).filter(
			(r) => Date.parse(r.lastupdated) >= firstRun - 30 * 86_400_000,
		);
		const rows = pollRows();
		const counts = await emitted();
		report.poll = {
			completions: fired.length,
			expectedRows: expected.length,
			rows: rows.length,
			runs: runs.length,
			failedRuns: runs.filter((r) => r.status === 'error').length,
			completionTriggerEmitted: [...counts.values()].reduce((a, b) => a + b, 0),
			pollsSkippedWhileOneRan: stack.main.logLinesSinceStart(skipped).length,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: polling recipe ${JSON.stringify(report.poll)}`);

		// runs failed while Google was down or over its quota; the next ones made up for them
		expect(runs.some((r) => r.status === 'error')).toBe(true);
		const keys = rows.map((row) => row.completionid);
		expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
		expect(Object.fromEntries(rows.map((row) => [row.completionid, row]))).toEqual(
			Object.fromEntries(expected.map((r) => [String(r.completionid), asRow(r)])),
		);
		// the webhook recipe writes completions as created: its row and its runs did not change
		expect(webhookRows().find((row) => row['Completion ID'] === String(changed))).toEqual(
			webhookRowBefore,
		);
		expect(await executionsOf('webhook')).toHaveLength(webhookRunsBefore);
		// the Completion Trigger, across the restart and the outages: each completion once, the
		// changed one again in its new state
		expect(Object.fromEntries(fired.map((id) => [id, counts.get(id)]))).toEqual(
			Object.fromEntries(fired.map((id) => [id, id === changed ? 2 : 1])),
		);
	});

	test('catch-up recipe: two rows lost from the webhook sheet come back, no row doubles', async () => {
		const lost = [fired[3], fired[7]];
		for (const id of lost) {
			const at = webhookRows().findIndex((row) => row['Completion ID'] === String(id));
			standIn.deleteRow(sheets.webhook, 'Course completions', at + 2);
		}
		expect(webhookRows()).toHaveLength(fired.length - 2);
		const cli = await stack.host.executeCli(workflowIds.catchUp);
		const [run] = await stack.client.waitForExecutions(workflowIds.catchUp, 1, 120_000);
		const problem = run ? executionError(run) : 'no stored run';
		if (problem)
			throw new Error(`the catch-up run: ${problem}\n${(cli.stdout + cli.stderr).slice(-3000)}`);
		report.catchUp = { lost: lost.length, rows: webhookRows().length };

		expectOneRowEach(fired);
		for (const id of lost) {
			const { completion } = await control().completion(id);
			expect(webhookRows().find((row) => row['Completion ID'] === String(id))).toMatchObject({
				Username: completion.username,
				Course: completion.contentname,
				'Completed at': completion.timecompleted,
				Email: '',
			});
		}
	});

	test('weekly report: a week column, each completion once in its week, a second run counts nothing twice, a missed Monday leaves no gap', async () => {
		const t0 = Date.now();
		await stack.client.deactivate(workflowIds.webhook);
		await control().setConfig({ deliveryTimeoutMs: 5000 });
		const weekOf = (iso: string) => DateTime.fromISO(iso, { zone: ZONE }).toFormat("kkkk-'W'WW");
		/** `n8n execute` of the report on a clock at Tuesday 07:00 of the week `weeksAhead` on */
		async function runReport(weeksAhead: number) {
			const n8nNow = DateTime.fromMillis(Date.now() + movedMs, { zone: ZONE });
			const at = n8nNow.startOf('week').plus({ weeks: weeksAhead, days: 1, hours: 7 });
			stack.host.clockOffsetMs = at.toMillis() - n8nNow.toMillis();
			try {
				const before = (await stack.client.listExecutions({ workflowId: workflowIds.report }))
					.length;
				// n8n's default expression engine (vm) reads the wall clock in its isolate, not the moved
				// one; the legacy engine evaluates the same expressions in n8n's process
				const cli = await stack.host.executeCli(workflowIds.report, {
					env: { N8N_EXPRESSION_ENGINE: 'legacy' },
				});
				const runs = await stack.client.waitForExecutions(workflowIds.report, before + 1, 120_000);
				const problem = executionError(runs[0]);
				if (problem)
					throw new Error(`the report run: ${problem}\n${(cli.stdout + cli.stderr).slice(-3000)}`);
				return at;
			} finally {
				stack.host.clockOffsetMs = 0;
			}
		}
		/** What the report should hold after runs at `runs`: completions of their 4 weeks before. */
		async function expected(runs: DateTime[]) {
			const weeks = new Map<string, string>();
			for (const at of runs)
				for (let n = 4; n >= 1; n--) {
					const start = at.startOf('week').minus({ weeks: n });
					weeks.set(
						start.toFormat("kkkk-'W'WW"),
						`${start.toFormat('ccc d LLL yyyy, HH:mm')} (${ZONE})`,
					);
				}
			const records = (await feedRecords(stack, demo, fired)).filter(
				(r) => r.timecompleted && weeks.has(weekOf(r.timecompleted)),
			);
			return {
				completions: Object.fromEntries(
					records.map((r) => [
						String(r.completionid),
						{
							Week: weekOf(r.timecompleted),
							'Completed at': DateTime.fromISO(r.timecompleted, { zone: ZONE }).toISO({
								suppressMilliseconds: true,
							}),
							Username: shown(r.username),
							Course: shown(r.contentname),
							Type: shown(r.contenttype),
							Status: r.completionstatus,
							'Completion ID': String(r.completionid),
						},
					]),
				),
				totals: Object.fromEntries(
					[...weeks].map(([week, starts]) => [
						week,
						{
							Week: week,
							'Week starts': starts,
							Completions: String(records.filter((r) => weekOf(r.timecompleted) === week).length),
						},
					]),
				),
			};
		}
		const sheet = () => ({
			completions: Object.fromEntries(
				standIn.records(sheets.report, 'Completions').map((r) => [r['Completion ID'], r]),
			),
			completionRows: standIn.records(sheets.report, 'Completions').length,
			totals: Object.fromEntries(
				standIn.records(sheets.report, 'Weekly totals').map((r) => [r.Week, r]),
			),
			totalRows: standIn.records(sheets.report, 'Weekly totals').length,
		});

		// Monday of next week: this week's completions reported
		const first = await runReport(1);
		const afterFirst = sheet();
		const want1 = await expected([first]);
		expect(afterFirst.completions).toEqual(want1.completions);
		expect(afterFirst.completionRows).toBe(Object.keys(want1.completions).length);
		expect(afterFirst.totals).toEqual(want1.totals);
		expect(afterFirst.totalRows).toBe(4);
		expect(Object.keys(want1.completions).length).toBeGreaterThanOrEqual(fired.length);

		// "Run now" again: nothing counted twice
		await runReport(1);
		expect(sheet()).toEqual(afterFirst);

		// a week later three completions; the Monday after is missed (n8n off); the one after reports
		await moveClocks(WEEK_MS);
		const nextWeek = await completeAtOnce(3);
		const third = await runReport(2);
		const after = sheet();
		const want = await expected([first, third]);
		report.report = {
			weeks: Object.keys(after.totals),
			totals: Object.values(after.totals).map((r) => r.Completions),
			completionRows: after.completionRows,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: weekly report ${JSON.stringify(report.report)}`);

		expect(nextWeek.every((id) => after.completions[String(id)])).toBe(true);
		expect(after.completions).toEqual(want.completions);
		expect(after.completionRows).toBe(Object.keys(want.completions).length);
		expect(after.totals).toEqual(want.totals);
		// six weeks in a row, no gap: the four before `first`, then the two reported only by `third`
		expect(after.totalRows).toBe(6);
		expect(Object.keys(after.totals).sort()).toEqual(Object.keys(want.totals).sort());
	});

	test('n8n asked no other Google host (no token refresh, no other API) through the proxy', () => {
		expect(standIn.refusedTunnels.filter((target) => /google/i.test(target))).toEqual([]);
	});
});
