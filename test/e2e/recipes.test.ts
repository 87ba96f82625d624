// The three Google Sheets recipes of demo/workflows, proven as a user imports them (README,
// "Recipes"): each file is loaded from disk unchanged but for two things a user supplies, done in
// memory only: the Learning Platform credential (set to this file's), and the Google Sheets step
// (there is no Google here), swapped for a recording step of the same name, position and
// connections: an HTTP Request node (no credential) that POSTs, per item, the row the Sheets step
// would write (its column mapping, unchanged expressions) to a recorder in this test process. The
// recorder keeps every raw append and, like the sheet, one row per value of the column the Sheets
// step matches on (Append or Update Row: a known key updates its row in place).
//
// One n8n (SQLite) with the sandbox API and the TLS front (the webhook trigger needs an https URL),
// all three recipes imported and activated at the start:
// - webhook recipe: completions, a graceful restart of n8n, more completions, then an outage (n8n
//   stopped while completions happen and the platform gives up on each) and a start, after which
//   the next completion sets off the trigger's recovery at the file's defaults (README: "with the
//   first delivery after n8n starts"). Every completion is one row, one append, one execution.
// - polling recipe (the same completions reach it through the feed, across the restart and the
//   outage): one row per completion; a record then changes and is emitted again, and its row
//   holds the newest values, still one row per completion.
// - report recipe ("Run now", with `n8n execute`): its rows are exactly the records the sandbox
//   holds as changed in the last 7 days and an hour (read record by record through the control
//   API, the feed's default filters applied).
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import {
	executionError,
	log,
	REPO_ROOT,
	scaled,
	startStack,
	type ExecutionSummary,
	type Stack,
	type WorkflowJson,
} from '../../scripts/n8n';
import { waitFor } from '../sandbox/helpers';
import {
	demoData,
	executionsSummary,
	importFreshCredentials,
	landed,
	sleep,
	stopAndReport,
	TYPES,
	uniqueId,
	webhookDeliveriesSettled,
} from './helpers';

jest.setTimeout(900_000);
landed();

const RECIPES = {
	webhook: 'completion-to-google-sheets.json',
	poll: 'completion-poll-to-google-sheets.json',
	report: 'weekly-report-to-google-sheets.json',
} as const;
type Recipe = keyof typeof RECIPES;
const RECIPE_NAMES = Object.keys(RECIPES) as Recipe[];

const SHEETS_TYPE = 'n8n-nodes-base.googleSheets';
/** completions per phase of the webhook recipe: before the restart, after it, during the outage */
const PER_PHASE = 3;
const DAY_MS = 86_400_000;

type Row = Record<string, string>;
const cell = (value: unknown): string =>
	value === null || value === undefined
		? ''
		: typeof value === 'object'
			? JSON.stringify(value)
			: String(value);

/**
 * Stands in for the spreadsheets: every POST of a recording step is an append (kept in order),
 * and each recipe's sheet holds one row per value of its key column, updated in place when the key
 * comes again, as Google Sheets' Append or Update Row does.
 */
class SheetRecorder {
	readonly appends: Array<{ recipe: string; execution: string; row: Row; at: number }> = [];
	private readonly sheets = new Map<string, Map<string, Row>>();
	private server?: http.Server;
	url = '';

	async start(): Promise<void> {
		this.server = http.createServer((req, res) => {
			let body = '';
			req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
			req.on('end', () => {
				try {
					const url = new URL(req.url ?? '/', 'http://recorder');
					const recipe = /^\/rows\/(\w+)$/.exec(url.pathname)?.[1];
					const key = url.searchParams.get('key');
					if (req.method !== 'POST' || !recipe || !key) throw new Error(`not a row: ${req.url}`);
					const row = Object.fromEntries(
						Object.entries(JSON.parse(body) as Record<string, unknown>).map(([k, v]) => [
							k,
							cell(v),
						]),
					);
					if (!row[key]) throw new Error(`a row without its key column ${key}: ${body}`);
					this.appends.push({
						recipe,
						execution: url.searchParams.get('execution') ?? '',
						row,
						at: Date.now(),
					});
					const sheet = this.sheets.get(recipe) ?? new Map<string, Row>();
					sheet.set(row[key], row);
					this.sheets.set(recipe, sheet);
					res.writeHead(200, { 'content-type': 'application/json' });
					res.end('{"recorded":true}');
				} catch (error) {
					res.writeHead(400, { 'content-type': 'text/plain' });
					res.end((error as Error).message);
				}
			});
		});
		await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
		this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
	}

	/** The sheet as it would read: key -> row. */
	sheet(recipe: Recipe): Map<string, Row> {
		return this.sheets.get(recipe) ?? new Map();
	}

	/** How many raw appends each key got. */
	appendsPerKey(recipe: Recipe, key: string): Map<string, number> {
		const counts = new Map<string, number>();
		for (const a of this.appends.filter((a) => a.recipe === recipe))
			counts.set(a.row[key], (counts.get(a.row[key]) ?? 0) + 1);
		return counts;
	}

	async close(): Promise<void> {
		await new Promise<void>((resolve) =>
			this.server ? this.server.close(() => resolve()) : resolve(),
		);
	}
}

interface SheetsStep {
	/** the node's name (kept) */
	name: string;
	/** the column Append or Update matches on */
	key: string;
	columns: string[];
}

/**
 * A recipe file as imported, credentials chosen: the Learning Platform credential set to
 * `credentialId`, the Google Sheets step replaced by a recording step (same name, id, position,
 * connections) whose body is the Sheets step's column mapping. Anything else is as in the file.
 */
function asImported(
	recipe: Recipe,
	credentialId: string,
	recorderUrl: string,
): { workflow: WorkflowJson; sheets: SheetsStep } {
	const file = path.join(REPO_ROOT, 'demo', 'workflows', RECIPES[recipe]);
	const workflow = JSON.parse(fs.readFileSync(file, 'utf8')) as WorkflowJson;
	let sheets: SheetsStep | undefined;
	const nodes = workflow.nodes.map((node) => {
		const credentials = node.credentials as Record<string, unknown> | undefined;
		const others = Object.keys(credentials ?? {}).filter((type) => type !== TYPES.credential);
		if (others.length)
			throw new Error(`${RECIPES[recipe]}: ${node.name} needs ${others.join(', ')}`);
		const chosen = credentials
			? { credentials: { [TYPES.credential]: { id: credentialId, name: `e2e ${credentialId}` } } }
			: {};
		if (node.type !== SHEETS_TYPE) return { ...node, ...chosen };

		const parameters = node.parameters as {
			operation?: string;
			columns?: {
				mappingMode?: string;
				value?: Record<string, string>;
				matchingColumns?: string[];
			};
		};
		const mapping = parameters.columns?.value ?? {};
		const [key, ...more] = parameters.columns?.matchingColumns ?? [];
		if (
			sheets ||
			parameters.operation !== 'appendOrUpdate' ||
			parameters.columns?.mappingMode !== 'defineBelow' ||
			!key ||
			more.length ||
			!(key in mapping)
		)
			throw new Error(
				`${RECIPES[recipe]}: expected one Google Sheets "Append or Update Row" step mapping its columns and matching on one of them, found ${JSON.stringify(parameters).slice(0, 300)}`,
			);
		sheets = { name: String(node.name), key, columns: Object.keys(mapping) };
		return {
			id: node.id,
			name: node.name,
			position: node.position,
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.2,
			parameters: {
				method: 'POST',
				url: `=${recorderUrl}/rows/${recipe}?key=${encodeURIComponent(key)}&execution={{ $execution.id }}`,
				sendBody: true,
				contentType: 'json',
				specifyBody: 'keypair',
				bodyParameters: {
					parameters: Object.entries(mapping).map(([name, value]) => ({ name, value })),
				},
				options: {},
			},
		};
	});
	if (!sheets) throw new Error(`${RECIPES[recipe]} has no Google Sheets step`);
	return { workflow: { ...workflow, nodes }, sheets };
}

describe('the Google Sheets recipes as a user imports them', () => {
	let stack: Stack;
	const recorder = new SheetRecorder();
	const suiteStart = Date.now();
	const report: Record<string, unknown> = {};
	const credentialIds = Object.fromEntries(
		RECIPE_NAMES.map((recipe) => [recipe, uniqueId(`recipe${recipe}`)]),
	) as Record<Recipe, string>;
	const workflowIds = {} as Record<Recipe, string>;
	const steps = {} as Record<Recipe, SheetsStep>;
	let usernames: Record<Recipe, string>;
	/** distinct (active learner, course) pairs: each completion has its own completion id */
	let pairs: Array<{ userId: number; contentId: number }> = [];
	/** every completion this file made, in order */
	const fired: number[] = [];

	const control = () => stack.sandbox!.control;

	async function complete(n: number): Promise<number[]> {
		const ids: number[] = [];
		for (let i = 0; i < n; i++) {
			const pair = pairs.shift();
			if (!pair) throw new Error('out of learner/course pairs');
			ids.push((await control().simulateCompletion(pair)).completion.completionid);
		}
		fired.push(...ids);
		return ids;
	}

	/** The recipe's sheet holds a row for each of `ids`. */
	async function untilRows(recipe: Recipe, ids: number[], timeoutMs: number, what: string) {
		const sheet = () => recorder.sheet(recipe);
		await waitFor(
			async () => ids.every((id) => sheet().has(String(id))),
			scaled(timeoutMs),
			() =>
				`${what}: rows for ${ids.filter((id) => !sheet().has(String(id))).join(', ')} (the ${recipe} sheet has ${[...sheet().keys()].join(', ')})`,
			500,
		);
	}

	/**
	 * Nothing more can reach the recipe's sheet: every execution of the workflow has finished and
	 * nothing can start another. The webhook recipe: the platform has no attempt pending, every
	 * webhook request through the front has its answer, no recovery run is under way (each logs its
	 * beginning and its end) and the newest request is older than the longest wait of a run a
	 * delivery sets off. The polling recipe: a poll has read the feed since the call, and what it
	 * found has run.
	 */
	async function quiet(recipe: Recipe): Promise<ExecutionSummary[]> {
		// the sandbox logs whole seconds on its clock: reads in a later second than the call
		const calledAt = Math.floor((await control().getClock()).now / 1000) * 1000;
		for (;;) {
			let settled: boolean;
			if (recipe === 'webhook') {
				settled = await webhookDeliveriesSettled(stack, [stack.main]);
			} else {
				// the second poll since the call has read the feed: the first one's execution exists
				const reads = (
					await control().requests({ username: usernames[recipe], path: '/completions' })
				)
					.map((r) => Date.parse(r.at))
					.filter((at) => at > calledAt);
				// a poll's reads (pages) come within seconds; polls a minute apart
				const polls = reads.filter((at, i) => i === 0 || at - reads[i - 1] > 30_000);
				settled = polls.length >= 2;
			}
			// listed after the markers were read: whatever they let through has been created
			const executions = settled
				? await stack.client.listExecutions({ workflowId: workflowIds[recipe] })
				: [];
			if (settled && executions.every((e) => !['new', 'running', 'waiting'].includes(e.status)))
				return stack.client.listExecutions({ workflowId: workflowIds[recipe], includeData: true });
			await sleep(500);
		}
	}

	/** n8n back after a stop: logged in again, every active recipe's triggers registered. */
	async function backUp(): Promise<void> {
		await stack.client.login(stack.owner);
		for (const recipe of RECIPE_NAMES)
			await stack.client.waitForPublication(workflowIds[recipe], 'published');
	}

	beforeAll(async () => {
		await recorder.start();
		stack = await startStack({ name: 'e2e-recipes', sandbox: true });
		const users = await importFreshCredentials(stack, Object.values(credentialIds));
		usernames = Object.fromEntries(
			RECIPE_NAMES.map((recipe) => [recipe, users.get(credentialIds[recipe])!.username]),
		) as Record<Recipe, string>;
		for (const recipe of RECIPE_NAMES) {
			const { workflow, sheets } = asImported(recipe, credentialIds[recipe], recorder.url);
			steps[recipe] = sheets;
			// as "Import from File" does: the file's nodes, connections and settings
			workflowIds[recipe] = (await stack.client.createWorkflow(workflow)).id;
		}
		// "then activate it": the polling trigger's first poll sets its starting point ('now')
		for (const recipe of RECIPE_NAMES) await stack.client.activate(workflowIds[recipe]);

		const demo = await demoData(stack);
		const learners = demo.activeLearners.map((u) => u.id);
		const courses = demo.content
			.filter((c) => c.contenttype === 'Course' && !c.deleted)
			.map((c) => c.id);
		pairs = courses
			.slice(0, 4)
			.flatMap((contentId) => learners.slice(0, 10).map((userId) => ({ userId, contentId })));
		report.platformConfig = await control().getConfig();
	}, 900_000);

	afterAll(() => recorder.close());
	stopAndReport('e2e-recipes', () => stack, report, suiteStart);

	test(`webhook recipe: ${PER_PHASE} completions, an n8n restart, ${PER_PHASE} more, an outage with ${PER_PHASE} missed, one after it: each completion is one row, once`, async () => {
		const key = steps.webhook.key;
		const t0 = Date.now();

		const beforeRestart = await complete(PER_PHASE);
		await untilRows('webhook', beforeRestart, 60_000, 'before the restart');

		await stack.main.restart();
		await backUp();
		const afterRestart = await complete(PER_PHASE);
		await untilRows('webhook', afterRestart, 90_000, 'after the restart');

		// the outage: n8n stopped (15 s to finish, then killed) while completions happen, and the
		// platform tries each and gives up before n8n is back
		await stack.main.stop(15_000);
		const downAt = Date.now();
		const whileDown = await complete(PER_PHASE);
		await waitFor(
			async () => (await control().pendingDeliveries()).pending === 0,
			scaled(60_000),
			'the platform to give up on the deliveries made during the outage',
			500,
		);
		const attemptsWhileDown = (await control().deliveries({ username: usernames.webhook })).filter(
			(a) => whileDown.includes(JSON.parse(a.body).payload?.completion?.id as number),
		);
		await stack.main.start();
		const downMs = Date.now() - downAt;
		await backUp();
		// the first delivery after the start sets off the recovery of what was missed
		const afterOutage = await complete(1);
		const all = [...beforeRestart, ...afterRestart, ...whileDown, ...afterOutage];
		await untilRows('webhook', all, 120_000, 'after the outage');
		const recovery = await waitFor(
			async () =>
				stack.main.logLinesSinceStart().find((line) => /: missed deliveries \(/.test(line)),
			scaled(120_000),
			'the recovery run to finish',
			1000,
		);
		const executions = await quiet('webhook');
		// how the outage's completions reached n8n: redispatched by the platform on request
		const redispatched = (await control().deliveries({ username: usernames.webhook })).filter(
			(a) =>
				whileDown.includes(JSON.parse(a.body).payload?.completion?.id as number) &&
				a.delivery_id !== '' &&
				a.status_code === 200,
		);
		const sheet = recorder.sheet('webhook');
		const appends = recorder.appendsPerKey('webhook', key);

		report.webhook = {
			completions: all.length,
			rows: sheet.size,
			appends: recorder.appends.filter((a) => a.recipe === 'webhook').length,
			executions: executions.length,
			platformAttemptsWhileDown: attemptsWhileDown.length,
			redispatchedAndAnswered: redispatched.length,
			downMs,
			recovery: recovery.replace(/^.*Learning Platform Trigger: /, '').slice(0, 200),
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: webhook recipe ${JSON.stringify(report.webhook)}`);

		// the set-up did what it says: the platform tried every completion of the outage, failed,
		// and had given up before n8n came back
		expect(new Set(attemptsWhileDown.map((a) => JSON.parse(a.body).payload.completion.id))).toEqual(
			new Set(whileDown),
		);
		expect(attemptsWhileDown.filter((a) => a.status_code === 200)).toEqual([]);
		// and the trigger's recovery had each redispatched (a delivery id) once n8n was back
		expect(
			new Set(redispatched.map((a) => JSON.parse(a.body).payload.completion.id as number)),
		).toEqual(new Set(whileDown));

		// every completion one row (none missing, none extra), appended once, one execution each
		expect([...sheet.keys()].sort()).toEqual(all.map(String).sort());
		expect([...appends].filter(([, count]) => count !== 1)).toEqual([]);
		expect(executionsSummary(executions.filter((e) => e.status !== 'success'))).toBe('');
		expect(executions).toHaveLength(all.length);
		// and the row is the completion's (the mapping reads the delivery's payload)
		for (const id of all) {
			const { completion } = await control().completion(id);
			expect(sheet.get(String(id))).toMatchObject({
				Username: completion.username,
				Course: completion.contentname,
				'Completed at': expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			});
		}
	});

	test('report recipe ("Run now"): its rows are the completions the platform holds as changed in the last 7 days and an hour', async () => {
		const t0 = Date.now();
		const cli = await stack.host.executeCli(workflowIds.report);
		const [execution] = (
			await stack.client.waitForExecutions(workflowIds.report, 1, 120_000)
		).filter((e) => e.mode === 'cli');
		const problem = execution ? executionError(execution) : 'no stored run';
		if (problem)
			throw new Error(
				`the report run: ${problem}\nn8n execute (code ${cli.code}):\n${(cli.stdout + cli.stderr).slice(-3000)}`,
			);

		// what the platform holds: every record, read one by one through the control API, those
		// the feed shows by default (completed, viewed or archived; learner and content present)
		// changed at or after the run's start minus 7 days and an hour
		const since = Date.parse(execution.startedAt) - 7 * DAY_MS - 3_600_000;
		const demo = await demoData(stack);
		const learners = new Set(demo.activeLearners.map((u) => u.id));
		const contents = new Set(demo.content.filter((c) => !c.deleted).map((c) => c.id));
		const expected = new Map<string, Row>();
		const columns = steps.report.columns;
		// ids are a sequence from 1; a batch past the highest known
		const last = Math.max((await control().demo()).completions, ...fired) + 100;
		let read = 0;
		for (let id = 1; id <= last; id += 100) {
			const batch = Array.from({ length: 100 }, (_, i) => id + i);
			const records = await Promise.all(
				batch.map((n) =>
					control()
						.completion(n)
						.then((r) => r.completion)
						.catch(() => undefined),
				),
			);
			for (const record of records) {
				if (!record) continue;
				read++;
				if (
					['Completed', 'Viewed', 'Archived'].includes(record.completionstatus) &&
					learners.has(record.userid) &&
					contents.has(record.contentid) &&
					Date.parse(record.lastupdated) >= since
				)
					expected.set(
						String(record.completionid),
						Object.fromEntries(columns.map((c) => [c, cell(record[c])])),
					);
			}
		}

		const sheet = recorder.sheet('report');
		const appends = recorder.appends.filter((a) => a.recipe === 'report');
		report.report = {
			recordsRead: read,
			expectedRows: expected.size,
			rows: sheet.size,
			appends: appends.length,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: report recipe ${JSON.stringify(report.report)}`);

		expect(expected.size).toBeGreaterThanOrEqual(fired.length);
		expect(Object.fromEntries(sheet)).toEqual(Object.fromEntries(expected));
		expect(appends).toHaveLength(expected.size);
	});

	test('polling recipe: one row per completion, across the restart and the outage; a record that changes updates its row with its newest values', async () => {
		const key = steps.poll.key;
		const t0 = Date.now();
		// every completion so far reaches the polling recipe through the feed
		await untilRows('poll', fired, 150_000, 'the polls');
		const appendsBefore = recorder.appendsPerKey('poll', key);

		const changed = fired[0];
		const { completion: newest } = await control().simulateRecordChange(changed);
		await waitFor(
			async () => recorder.sheet('poll').get(String(changed))?.lastupdated === newest.lastupdated,
			scaled(150_000),
			`the changed record ${changed} (lastupdated ${newest.lastupdated}) in its row`,
			500,
		);
		const executions = await quiet('poll');
		const sheet = recorder.sheet('poll');
		const appends = recorder.appendsPerKey('poll', key);

		report.poll = {
			completions: fired.length,
			rows: sheet.size,
			appendsBeforeTheChange: [...appendsBefore.values()].reduce((a, b) => a + b, 0),
			appends: [...appends.values()].reduce((a, b) => a + b, 0),
			executions: executions.length,
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		log(`recipes: polling recipe ${JSON.stringify(report.poll)}`);

		expect(executionsSummary(executions.filter((e) => e.status !== 'success'))).toBe('');
		// before the change: each completion appended once
		expect([...appendsBefore].filter(([, count]) => count !== 1)).toEqual([]);
		// after: one row per completion, the changed one appended a second time (an update)
		expect([...sheet.keys()].sort()).toEqual(fired.map(String).sort());
		expect(Object.fromEntries(appends)).toEqual(
			Object.fromEntries(fired.map((id) => [String(id), id === changed ? 2 : 1])),
		);
		// each row holds the record as the platform now has it, the changed one's newest values
		for (const id of fired) {
			const { completion } = await control().completion(id);
			expect(sheet.get(String(id))).toEqual(
				Object.fromEntries(steps.poll.columns.map((c) => [c, cell(completion[c])])),
			);
		}
	});
});
