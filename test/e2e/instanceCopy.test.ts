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
	nodeOutput,
	startTlsFront,
	type N8nClient,
	type N8nProcess,
	type SandboxSubscription,
	type SandboxUser,
	type TlsFront,
} from '../../scripts/n8n';
import { waitFor } from '../sandbox/helpers';
import {
	demoData,
	importFreshCredentials,
	landed,
	linearWorkflow,
	sleep,
	TYPES,
	uniqueId,
	useStack,
} from './helpers';

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
	let pairs: Array<{ userId: number; contentId: number }>;
	let copyFront: TlsFront | undefined;
	let copy: N8nProcess | undefined;
	/** Completion ids made so far, in order, and those made while the copy was on. */
	const made: number[] = [];
	const madeWhileCopyOn: number[] = [];
	let productionSubscription: { id: number; url: string };

	const control = () => ctx.stack.sandbox!.control;
	const live = async (): Promise<SandboxSubscription[]> =>
		(await control().subscriptions(user.username)).filter((s) => !s.deleted_at);
	const liveText = async () => (await live()).map((s) => `${s.id} ${s.url}`).sort();

	async function complete(): Promise<number> {
		const pair = pairs.shift();
		if (!pair) throw new Error('no (learner, course) pair left');
		const id = (await control().simulateCompletion(pair)).completion.completionid;
		made.push(id);
		return id;
	}

	/** The completion id each finished execution of the workflow in `client`'s n8n ran with. */
	async function ran(client: N8nClient): Promise<Array<number | string>> {
		const executions = await client.listExecutions({ workflowId, includeData: true });
		return executions
			.filter((e) => e.stoppedAt)
			.map((e) =>
				e.status === 'success'
					? (nodeOutput(e, 'Completion created')[0].payload as { completion: { id: number } })
							.completion.id
					: `execution ${e.id}: ${e.status}`,
			);
	}

	/** Every id in `ids` ran in `client`'s n8n, then (the platform idle, a few seconds) each once. */
	async function expectRanOnce(client: N8nClient, ids: number[]): Promise<void> {
		await waitFor(
			async () => {
				const done = await ran(client);
				return ids.every((id) => done.includes(id));
			},
			120_000,
			() => `completions ${ids.join(', ')} run`,
			1000,
		);
		await waitFor(
			async () => (await control().pendingDeliveries()).pending === 0,
			60_000,
			'no delivery pending at the platform',
			250,
		);
		await sleep(5_000);
		const done = await ran(client);
		for (const id of ids)
			expect({ id, runs: done.filter((d) => d === id).length }).toEqual({ id, runs: 1 });
		expect(done.filter((d) => typeof d === 'string')).toEqual([]);
	}

	/** Runs `n8n <args>` of production's host writing `--output` to a temp file; its JSON. */
	async function exportFromProduction(args: string[]): Promise<unknown> {
		const file = path.join(ctx.stack.workDir, `${args[0].replace(/\W+/g, '-')}.json`);
		const result = await ctx.stack.host.cli([...args, `--output=${file}`]);
		if (!fs.existsSync(file))
			throw new Error(`${args[0]} failed (code ${result.code}):\n${result.stderr.slice(-2000)}`);
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	}

	beforeAll(async () => {
		user = (await importFreshCredentials(ctx.stack, [credId])).get(credId)!;
		const demo = await demoData(ctx.stack);
		pairs = demo.content
			.filter((c) => c.contenttype === 'Course' && !c.deleted)
			.flatMap((c) => demo.activeLearners.map((l) => ({ userId: l.id, contentId: c.id })));
		await control().setConfig({ rateLimitPerMinute: 10_000 });
		await ctx.stack.host.importWorkflows([
			linearWorkflow(workflowId, 'e2e: production', [
				{
					name: 'Completion created',
					type: TYPES.trigger,
					credentialId: credId,
					webhookId,
					parameters: { event: 'Events\\Courses\\Completion_created' },
				},
				{ name: 'Done', type: 'n8n-nodes-base.noOp' },
			]),
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
		await expectRanOnce(ctx.client, [await complete()]);
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

		for (let i = 0; i < 3; i++) madeWhileCopyOn.push(await complete());
		await expectRanOnce(ctx.client, made);
		await expectRanOnce(copy.client, madeWhileCopyOn);
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
		const after = [await complete(), await complete()];
		await expectRanOnce(ctx.client, made);
		const copyRan = await ran(copy!.client);
		measured.copyRan = copyRan;
		for (const id of after) expect(copyRan).not.toContain(id);
		measured.productionRan = await ran(ctx.client);
	});
});
