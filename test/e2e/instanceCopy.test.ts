// A copy of production switched on, in real n8n (issue 48, item 1): two n8n instances on one
// sandbox. Production runs the trigger behind its TLS front; a staging copy is made as an operator
// makes one with n8n's CLI (`export:workflow` and `export:credentials --decrypted` from production,
// `import:*` into a second n8n with its own database and its own WEBHOOK_URL), which carries the
// workflow's static data: production's subscription id and address. The copy's workflow is then
// switched on and, later, off. Judged by what the platform stored (subscriptions, their addresses)
// and by each instance's stored executions: production must run every completion once, before,
// while and after the copy is on; the copy registers a subscription of its own.
// The copy uses production's API user: the case the README warns against (a shared refresh token
// cannot last), and the one where the copy could reach production's subscription at all
// (subscriptions belong to the API key, spec Authentication 8).
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
	freePort,
	log,
	N8nHost,
	startTlsFront,
	type N8nProcess,
	type SandboxUser,
	type TlsFront,
} from '../../scripts/n8n';
import { waitFor } from '../sandbox/helpers';
import { CompletionRuns, completionWorkflow } from './completionRuns';
import { importFreshCredentials, landed, uniqueId, useStack } from './helpers';

landed();

describe('a copy of production (export and import, its own WEBHOOK_URL) switched on and off', () => {
	const startedAt = Date.now();
	const ctx = useStack('e2e-instance-copy');
	const credId = uniqueId('copyCred');
	const workflowId = uniqueId('copyWf');
	const webhookId = randomUUID();
	const hookPath = `webhook/${webhookId}/webhook`;
	const measured: Record<string, unknown> = {};
	let user: SandboxUser;
	let runs: CompletionRuns;
	let copyFront: TlsFront | undefined;
	let copy: N8nProcess | undefined;
	/** Completion ids made while the copy was on. */
	const madeWhileCopyOn: number[] = [];
	let productionSubscription: { id: number; url: string };

	const live = () => runs.live(user.username);
	const liveText = async () => (await live()).map((s) => `${s.id} ${s.url}`).sort();

	/** Runs `n8n <args>` of production's host writing `--output` to a file; its JSON. */
	async function exportFromProduction(args: string[]): Promise<unknown> {
		const file = path.join(ctx.stack.workDir, `${args[0].replace(/\W+/g, '-')}.json`);
		const result = await ctx.stack.host.cli([...args, `--output=${file}`]);
		if (!fs.existsSync(file))
			throw new Error(`${args[0]} failed (code ${result.code}):\n${result.stderr.slice(-2000)}`);
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	}

	beforeAll(async () => {
		user = (await importFreshCredentials(ctx.stack, [credId])).get(credId)!;
		runs = await CompletionRuns.of(ctx.stack, workflowId);
		await ctx.stack.sandbox!.control.setConfig({ rateLimitPerMinute: 10_000 });
		await ctx.stack.host.importWorkflows([
			completionWorkflow(workflowId, 'e2e: production', credId, webhookId),
		]);
	});

	afterAll(async () => {
		await copy?.stop();
		await copyFront?.close();
		log(`instanceCopy: measured ${JSON.stringify(measured, null, 1)}`);
		log(`instanceCopy: total ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
	});

	test('production switched on: one subscription at its address; a completion runs once', async () => {
		await ctx.client.activate(workflowId);
		const [subscription, ...others] = await live();
		expect(others).toEqual([]);
		expect(subscription.url).toBe(`${ctx.stack.front.url}/${hookPath}`);
		productionSubscription = { id: subscription.id, url: subscription.url };
		await runs.expectRanOnce([await runs.complete()]);
	});

	test("the copy carries production's static data; switched on at its own address it registers a subscription of its own and production's stays; completions meanwhile run once in each", async () => {
		const workflows = (await exportFromProduction([
			'export:workflow',
			`--id=${workflowId}`,
		])) as Array<{ staticData?: unknown }>;
		const credentials = await ctx.stack.host.exportCredentials();
		const carried = JSON.stringify(workflows[0].staticData ?? null);
		measured.staticDataCarried = carried.length;
		// the case this test is about: the copy knows production's subscription
		expect(carried).toContain(String(productionSubscription.id));

		const copyHost = new N8nHost({
			userFolder: path.join(ctx.stack.workDir, 'copy'),
			logDir: path.join(ctx.stack.workDir, 'logs'),
			paths: ctx.stack.paths,
		});
		await copyHost.installCommunityPackage(ctx.stack.packed.tarball);
		const copyPort = await freePort();
		copyFront = await startTlsFront({
			port: await freePort(),
			targetPort: copyPort,
			certificates: ctx.stack.certificates,
		});
		copyHost.webhookUrl = `${copyFront.url}/`;
		copy = copyHost.addProcess({
			port: copyPort,
			brokerPort: await freePort(),
			name: 'n8n-copy',
		});
		await copy.start();
		await copy.client.setupOwnerAndApiKey(ctx.stack.owner);
		await copyHost.importCredentials(credentials.filter((c) => c.id === credId));
		const file = path.join(ctx.stack.workDir, 'copy-workflow.json');
		fs.writeFileSync(file, JSON.stringify(workflows.map((w) => ({ ...w, active: false }))));
		const imported = await copyHost.cli(['import:workflow', `--input=${file}`]);
		expect(imported.stdout + imported.stderr).toMatch(/Successfully imported/);

		await copy.client.activate(workflowId);
		const copyUrl = `${copyFront.url}/${hookPath}`;
		const subscriptions = await live();
		measured.whileCopyOn = subscriptions.map((s) => `${s.id} ${s.url}`);
		expect(await liveText()).toEqual(
			[
				`${productionSubscription.id} ${productionSubscription.url}`,
				...subscriptions
					.filter((s) => s.id !== productionSubscription.id)
					.map((s) => `${s.id} ${copyUrl}`),
			].sort(),
		);
		expect(subscriptions).toHaveLength(2);

		for (let i = 0; i < 3; i++) madeWhileCopyOn.push(await runs.complete());
		await runs.expectRanOnce(runs.made);
		await runs.expectRanOnce(madeWhileCopyOn, { client: copy.client });
	});

	test("the copy switched off: its subscription is deleted, production's kept; production runs every completion once, before, while and after", async () => {
		await copy!.client.deactivate(workflowId);
		await waitFor(
			async () => (await live()).length === 1,
			60_000,
			"the copy's subscription deleted",
			500,
		);
		expect(await liveText()).toEqual([
			`${productionSubscription.id} ${productionSubscription.url}`,
		]);
		const after = [await runs.complete(), await runs.complete()];
		await runs.expectRanOnce(runs.made);
		const copyRan = await runs.ran(copy!.client);
		measured.copyRan = copyRan;
		for (const id of after) expect(copyRan).not.toContain(id);
		measured.productionRan = await runs.ran();
	});
});
