// Shared set-up of the end-to-end files: one real n8n per test file (beforeAll), stopped in
// afterAll even when tests fail, with every step's time printed at the end.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
	cleanupAll,
	executionError,
	log,
	sandboxCredential,
	REPO_ROOT,
	startStack,
	timingReport,
	scaled,
	type N8nClient,
	type N8nProcess,
	type Stack,
	type StackOptions,
	type PackedPackage,
	type WorkflowJson,
	type ExecutionSummary,
	type SandboxUser,
} from '../../scripts/n8n';
import {
	START_DELAY_MS,
	START_JITTER_MS,
} from '../../nodes/LearningPlatformTrigger/recovery/schedule';
import { roots } from '../sandbox/helpers';

// jest reads `testTimeout` from the global config only, so the e2e project's 900 s in
// jest.config.js does not reach the tests: set it here for every e2e file.
jest.setTimeout(900_000);

export const PACKAGE_NAME = 'n8n-nodes-learning-platform';
export const TYPES = {
	action: `${PACKAGE_NAME}.learningPlatform`,
	trigger: `${PACKAGE_NAME}.learningPlatformTrigger`,
	poll: `${PACKAGE_NAME}.learningPlatformCompletionTrigger`,
	credential: 'learningPlatformApi',
} as const;

/** The typeVersion of each of the package's nodes (each has one); other nodes default to 1. */
const TYPE_VERSIONS: Record<string, number> = {
	[TYPES.action]: 1,
	[TYPES.trigger]: 2,
	[TYPES.poll]: 1,
};

/**
 * The parts of the package the e2e files exercise. Each must exist: a renamed or missing node
 * file fails the suite at load (counted as a failed suite), never skips it.
 */
export function landed(): void {
	const parts = {
		action: 'nodes/LearningPlatform/LearningPlatform.node.ts',
		trigger: 'nodes/LearningPlatformTrigger/LearningPlatformTrigger.node.ts',
		poll: 'nodes/LearningPlatformCompletionTrigger/LearningPlatformCompletionTrigger.node.ts',
		credential: 'credentials/LearningPlatformApi.credentials.ts',
		sandbox: 'sandbox/cli.ts',
	};
	const missing = Object.values(parts).filter((p) => !fs.existsSync(path.join(REPO_ROOT, p)));
	if (missing.length) {
		throw new Error(`the e2e suite needs ${missing.join(', ')}, which this checkout lacks`);
	}
}

/** A pre-packed tarball (LP_E2E_TARBALL) skips the build + pack. */
function prepacked(): PackedPackage | undefined {
	const tarball = process.env.LP_E2E_TARBALL;
	if (!tarball) return undefined;
	return { tarball, name: PACKAGE_NAME, version: 'prepacked', files: [] };
}

/** What a suite gets: the stack and its n8n client, set in the file's beforeAll. */
export interface StackContext {
	stack: Stack;
	client: N8nClient;
}

/**
 * Starts the stack for one test file and registers its shutdown. Use as
 * `const ctx = useStack('name')` at the top of a describe; `ctx.stack` is set in beforeAll.
 */
export function useStack(name: string, options: Partial<StackOptions> = {}): StackContext {
	const ctx = {} as StackContext;
	beforeAll(async () => {
		landed();
		ctx.stack = await startStack({
			name,
			sandbox: true,
			packed: prepacked(),
			...options,
		});
		ctx.client = ctx.stack.client;
	}, 900_000);
	afterAll(async () => {
		try {
			await ctx.stack?.stop();
		} finally {
			await cleanupAll();
			log(`${name}: step timings\n${timingReport()}`);
		}
	}, 120_000);
	return ctx;
}

/**
 * The `afterAll` of a file that starts its own stack: stops it (also after failed tests) and every
 * process left, then prints what the file measured, its total time and the step timings.
 */
export function stopAndReport(
	name: string,
	stack: () => { stop(): Promise<void> } | undefined,
	report: Record<string, unknown>,
	startedAt: number,
): void {
	afterAll(async () => {
		try {
			await stack()?.stop();
		} finally {
			await cleanupAll();
			log(`${name}: measured ${JSON.stringify(report, null, 1)}`);
			log(
				`${name}: total ${((Date.now() - startedAt) / 1000).toFixed(0)} s; step timings\n${timingReport()}`,
			);
		}
	}, 180_000);
}

let idCounter = 0;
/** A workflow/credential id unique in this run (n8n ids: up to 16 characters, alphanumeric). */
export function uniqueId(prefix: string): string {
	const rand = Math.random().toString(36).slice(2, 8);
	return `${prefix}${(++idCounter).toString(36)}${rand}`.replace(/[^a-zA-Z0-9]/g, '').slice(0, 16);
}

export interface NodeSpec {
	name: string;
	type: string;
	parameters?: Record<string, unknown>;
	credentialId?: string;
	typeVersion?: number;
	webhookId?: string;
}

/** A linear workflow: node[0] -> node[1] -> ... */
export function linearWorkflow(id: string, name: string, specs: NodeSpec[]): WorkflowJson {
	const nodes = specs.map((spec, index) => ({
		id: `${id}-${index}`,
		name: spec.name,
		type: spec.type,
		typeVersion: spec.typeVersion ?? TYPE_VERSIONS[spec.type] ?? 1,
		position: [index * 220, 0],
		parameters: spec.parameters ?? {},
		...(spec.webhookId ? { webhookId: spec.webhookId } : {}),
		...(spec.credentialId
			? { credentials: { [TYPES.credential]: { id: spec.credentialId, name: spec.credentialId } } }
			: {}),
	}));
	const connections: Record<string, unknown> = {};
	for (let i = 0; i < specs.length - 1; i++) {
		connections[specs[i].name] = { main: [[{ node: specs[i + 1].name, type: 'main', index: 0 }]] };
	}
	return {
		id,
		name,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		active: false,
		pinData: {},
	};
}

export { sleep } from '../../sandbox/util';

/** A fresh sandbox API user (isolation per test) imported into n8n as a credential with that id. */
export async function importFreshCredentials(
	stack: Stack,
	ids: string[],
): Promise<Map<string, SandboxUser>> {
	if (!stack.sandbox) throw new Error('the sandbox API is not running');
	const users = new Map<string, SandboxUser>();
	// A new API user per credential: subscriptions, rate-limit bucket and token chain of its own.
	// (Without a username the control API re-issues the default user's token, killing the last one.)
	for (const id of ids)
		users.set(id, await stack.sandbox.control.issueRefreshToken(`e2e-${id.toLowerCase()}`));
	await stack.host.importCredentials(
		ids.map((id) => sandboxCredential(id, `e2e ${id}`, users.get(id)!)),
	);
	return users;
}

/** Presents a refresh token to the API's refresh endpoint (spec operation 1); returns the HTTP status. */
export async function presentRefreshToken(
	user: SandboxUser,
	refreshToken: string,
): Promise<number> {
	const report = roots({
		url: user.base_url,
		tenancyId: encodeURIComponent(user.tenancy_id),
	}).report;
	const url = `${report}/apikeys?username=${encodeURIComponent(user.username)}`;
	const response = await fetch(url, {
		headers: {
			authorization: `Bearer ${refreshToken}`,
			'user-agent': 'lp-e2e-check',
			accept: 'application/json',
		},
	});
	await response.text();
	return response.status;
}

/** Webhook (n8n-nodes-base.webhook) node answering with the last node's first item. */
export function webhookStart(path: string): NodeSpec {
	return {
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
	};
}

/** Workflow ids imported/activated by a test file, for a tidy list in failures. */
export function executionsSummary(executions: ExecutionSummary[]): string {
	return executions
		.map(
			(e) => `${e.id}:${e.mode}:${e.status}${executionError(e) ? ` (${executionError(e)})` : ''}`,
		)
		.join('\n');
}

export interface DemoData {
	tenancy_id: string;
	users: Array<{ id: number; username: string; suspended: boolean; deleted: boolean }>;
	content: Array<{
		id: number;
		fullname: string;
		contenttype: string;
		deleted: boolean;
		activities: number[];
		sessions: number[];
	}>;
}

/** The sandbox's demo learners and content (`GET /__sandbox/demo`). */
export async function demoData(
	stack: Stack,
): Promise<DemoData & { activeLearners: DemoData['users'] }> {
	const demo: DemoData = await stack.sandbox!.control.demo();
	return { ...demo, activeLearners: demo.users.filter((u) => !u.suspended && !u.deleted) };
}

/** A workflow from nodes and edges `[from, to]` (fan-out allowed). */
export function graphWorkflow(
	id: string,
	name: string,
	specs: NodeSpec[],
	edges: Array<[string, string]>,
): WorkflowJson {
	const base = linearWorkflow(id, name, specs);
	const connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: string; index: number }>> }
	> = {};
	for (const [from, to] of edges) {
		connections[from] ??= { main: [[]] };
		connections[from].main[0].push({ node: to, type: 'main', index: 0 });
	}
	base.nodes.forEach(
		(node, index) => (node.position = [(index % 4) * 240, Math.floor(index / 4) * 160]),
	);
	return { ...base, connections };
}

/**
 * Whether nothing more can come of the webhook trigger's deliveries: the platform has no attempt
 * pending, every webhook request through the front has its answer, no recovery run is under way
 * in the `processes` running now (each run logs a line when it begins and one when it ends: a
 * run still going may yet redispatch), and the newest request is older than the longest wait of
 * a run a delivery sets off (START_DELAY_MS + START_JITTER_MS, stretched by this machine's
 * measured slowness).
 */
export async function webhookDeliveriesSettled(
	stack: Stack,
	processes: N8nProcess[],
): Promise<boolean> {
	if ((await stack.sandbox!.control.pendingDeliveries()).pending > 0) return false;
	const requests = stack.front.requests.filter((r) => r.url.startsWith('/webhook/'));
	if (!requests.every((r) => r.answeredAt !== undefined || r.error !== undefined)) return false;
	let runsUnderWay = 0;
	for (const p of processes.filter((p) => p.running)) {
		runsUnderWay += p.logLinesSinceStart(/looking for missed deliveries \(/).length;
		runsUnderWay -= p.logLinesSinceStart(
			/: (missed deliveries|could not recover missed deliveries) \(/,
		).length;
	}
	if (runsUnderWay > 0) return false;
	const newest = Math.max(0, ...requests.map((r) => r.answeredAt ?? Date.now()));
	return Date.now() - newest >= scaled(START_DELAY_MS + START_JITTER_MS);
}
