// `npm run sandbox`: real n8n 2.40.7 with this package installed as a community package, the
// sandbox learning-platform API, a TLS front for https webhooks, a demo credential and the demo
// workflows. Stays up until Ctrl-C.
//
//   npm run sandbox -- [--n8n-port 5678] [--broker-port 5679] [--api-port 5680] [--tls-port 5681]
//                      [--host 127.0.0.1] [--state-dir DIR] [--fresh] [--verbose] [--queue]
//
// State (the n8n user folder with its database, the sandbox API's tokens and subscriptions, the
// encryption key) lives in `<cache>/sandbox-state`, so a restart keeps the credential working and
// the workflows as you left them; `--fresh` starts over.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
	HR_ASSISTANT,
	HR_MCP,
	cacheRoot,
	cleanupAll,
	demoWorkflows,
	formatMs,
	installDemo,
	installSignalHandlers,
	log,
	N8N_VERSION,
	PortInUseError,
	startQueueStack,
	startStack,
	timingReport,
	type QueueStack,
	type Stack,
} from './n8n';

interface Options {
	n8nPort: number;
	brokerPort: number;
	apiPort: number;
	tlsPort: number;
	host: string;
	stateDir: string;
	fresh: boolean;
	verbose: boolean;
	queue: boolean;
}

const HELP = `Usage: npm run sandbox -- [options]

  --n8n-port N      n8n editor and API (default 5678, env N8N_PORT)
  --broker-port N   n8n's task broker (default 5679, env LP_BROKER_PORT)
  --api-port N      sandbox learning-platform API (default 5680, env LP_API_PORT)
  --tls-port N      https front of n8n, used as WEBHOOK_URL (default 5681, env LP_TLS_PORT)
  --host ADDR       interface to listen on (default 127.0.0.1, env LP_HOST; 0.0.0.0 to expose)
  --state-dir DIR   where n8n's data and the sandbox state live (default <cache>/sandbox-state)
  --fresh           delete that state first (new owner, credential, workflows, tokens)
  --verbose         echo n8n's and the sandbox API's output
  --queue           queue mode: n8n main + 2 workers + Redis + PostgreSQL (Debian packages,
                    installed when missing); n8n's data lives in a throwaway database, so every
                    --queue start is fresh (state in <state-dir>/queue)
`;

function parseArgs(argv: string[]): Options {
	const envPort = (name: string, fallback: number) =>
		process.env[name] ? Number(process.env[name]) : fallback;
	const options: Options = {
		n8nPort: envPort('N8N_PORT', 5678),
		brokerPort: envPort('LP_BROKER_PORT', 5679),
		apiPort: envPort('LP_API_PORT', 5680),
		tlsPort: envPort('LP_TLS_PORT', 5681),
		host: process.env.LP_HOST || '127.0.0.1',
		stateDir: process.env.LP_SANDBOX_STATE || path.join(cacheRoot(), 'sandbox-state'),
		fresh: false,
		verbose: false,
		queue: false,
	};
	const port = (value: string | undefined, flag: string) => {
		const n = Number(value);
		if (!value || !Number.isInteger(n) || n < 1 || n > 65535)
			throw new Error(`${flag} needs a port number, got ${value}`);
		return n;
	};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const [flag, inline] = arg.includes('=')
			? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
			: [arg, undefined];
		const value = () => inline ?? argv[++i];
		switch (flag) {
			case '--n8n-port':
				options.n8nPort = port(value(), flag);
				break;
			case '--broker-port':
				options.brokerPort = port(value(), flag);
				break;
			case '--api-port':
				options.apiPort = port(value(), flag);
				break;
			case '--tls-port':
				options.tlsPort = port(value(), flag);
				break;
			case '--host':
				options.host = value();
				break;
			case '--state-dir':
				options.stateDir = path.resolve(value());
				break;
			case '--fresh':
				options.fresh = true;
				break;
			case '--verbose':
				options.verbose = true;
				break;
			case '--queue':
				options.queue = true;
				break;
			case '--help':
			case '-h':
				process.stdout.write(HELP);
				process.exit(0);
				break;
			default:
				throw new Error(`unknown option ${arg}\n\n${HELP}`);
		}
	}
	const ports = [options.n8nPort, options.brokerPort, options.apiPort, options.tlsPort];
	if (new Set(ports).size !== ports.length)
		throw new Error(`the four ports must differ (got ${ports.join(', ')})`);
	return options;
}

function encryptionKey(stateDir: string): string {
	const file = path.join(stateDir, 'encryption-key');
	if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
	const key = randomBytes(24).toString('hex');
	fs.mkdirSync(stateDir, { recursive: true });
	fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
	return key;
}

/** The queue-mode stack when `--queue` started one. */
function queueStackOf(stack: Stack): QueueStack | undefined {
	return 'workers' in stack ? (stack as QueueStack) : undefined;
}

function banner(stack: Stack, options: Options, startedIn: number): string {
	const sandbox = stack.sandbox!;
	const queue = queueStackOf(stack);
	const n8nUrl = `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${stack.ports.n8n}`;
	const lines = [
		'',
		'==================================================================================',
		` n8n ${N8N_VERSION} with n8n-nodes-learning-platform is running (ready in ${formatMs(startedIn)})`,
		'',
		` n8n editor      ${n8nUrl}`,
		` login           ${stack.owner.email} / ${stack.owner.password}`,
		` sandbox API     ${sandbox.url}   (tenancy ${sandbox.tenancyId}, API user ${sandbox.username})`,
		` webhooks (TLS)  ${stack.webhookBaseUrl}   (self-signed; the sandbox trusts its CA)`,
		` credential      "Learning Platform (sandbox)"`,
		...(queue
			? [
					` queue mode      ${queue.workers.length} workers (${queue.workers.map((w) => `${w.name}: ${w.url}/healthz`).join(', ')})`,
					`                 Redis 127.0.0.1:${queue.redis.port}, PostgreSQL 127.0.0.1:${queue.postgres.port} (database n8n, user n8n)`,
					`                 which worker ran what: grep 'Worker started execution' ${path.join(options.stateDir, 'logs')}/n8n-worker-*.log`,
				]
			: []),
		'',
		' Demo workflows:',
		...demoWorkflows().map(
			(w) =>
				`   ${w.active ? '[active]  ' : '[manual]  '}${w.name}\n              ${n8nUrl}/workflow/${w.id}`,
		),
		'',
		' Simulate a course completion (the webhook trigger fires; see its Executions tab):',
		'',
		`   curl -s -X POST ${sandbox.url}/__sandbox/simulate/completion -H 'content-type: application/json' -d '{}'`,
		'',
		` The feed-sync workflow picks the same completion up on its next poll (every minute).`,
		'',
		" HR assistant (AI Agent + Learning Platform tools on the sandbox's scripted model, no API key):",
		`   chat page   ${n8nUrl}/webhook/${HR_ASSISTANT.chatWebhookId}/chat   (or "Open chat" in the editor)`,
		`   curl -s -X POST ${n8nUrl}/webhook/${HR_ASSISTANT.chatWebhookId}/chat -H 'content-type: application/json' \\`,
		`     -d '{"action":"sendMessage","sessionId":"demo","chatInput":"Which activities has learner 23 completed?"}'`,
		` MCP server      ${n8nUrl}/mcp/${HR_MCP.path}   (Streamable HTTP or SSE, no auth: loopback only)`,
		'',
		` State: ${options.stateDir}   Logs: ${path.join(options.stateDir, 'logs')}`,
		' Ctrl-C stops everything.',
		'==================================================================================',
		'',
	];
	return lines.join('\n');
}

async function main(): Promise<void> {
	let options: Options;
	try {
		options = parseArgs(process.argv.slice(2));
	} catch (error) {
		process.stderr.write(`${(error as Error).message}\n`);
		process.exit(2);
	}
	if (options.queue) {
		// The database is a throwaway PostgreSQL cluster: nothing of n8n survives a restart, so the
		// queue variant keeps its own, always fresh, state folder.
		options.stateDir = path.join(options.stateDir, 'queue');
		fs.rmSync(options.stateDir, { recursive: true, force: true });
	}
	let stopping = false;
	installSignalHandlers(() => {
		stopping = true;
	});
	const t0 = Date.now();
	if (options.fresh) {
		log(`--fresh: removing ${options.stateDir}`);
		fs.rmSync(options.stateDir, { recursive: true, force: true });
	}
	fs.mkdirSync(options.stateDir, { recursive: true });
	const apiStateFile = path.join(options.stateDir, 'sandbox-api.json');
	const apiStateExisted = fs.existsSync(apiStateFile);

	const stack = await (options.queue ? startQueueStack : startStack)({
		name: 'sandbox',
		workDir: options.stateDir,
		keepWorkDir: true,
		ports: {
			n8n: options.n8nPort,
			broker: options.brokerPort,
			sandbox: options.apiPort,
			front: options.tlsPort,
		},
		sandboxStateFile: apiStateFile,
		sandboxArgs: options.host !== '127.0.0.1' ? ['--host', options.host] : [],
		frontHost: options.host,
		encryptionKey: encryptionKey(options.stateDir),
		listenAddress: options.host,
		echo: options.verbose,
	});
	await installDemo(stack, { apiStateExisted });
	log(`step timings:\n${timingReport()}`);
	process.stdout.write(banner(stack, options, Date.now() - t0));

	// Stay up; if n8n or the sandbox API dies on its own, say so and stop the rest.
	const died = await Promise.race([
		stack.main.proc!.exited.then(() => `n8n (log: ${stack.main.logFile})`),
		...(queueStackOf(stack)?.workers ?? []).map((w) =>
			w.proc!.exited.then(() => `${w.name} (log: ${w.logFile})`),
		),
		stack.sandbox!.process.exited.then(
			() => `the sandbox API (log: ${path.join(options.stateDir, 'logs', 'sandbox-api.log')})`,
		),
	]);
	if (stopping) return new Promise<never>(() => undefined); // Ctrl-C: the signal handler exits
	log(`${died} exited unexpectedly; shutting down`);
	await cleanupAll();
	process.exit(1);
}

main().catch(async (error) => {
	if (error instanceof PortInUseError) {
		process.stderr.write(`\n${error.message}\n\n`);
	} else {
		process.stderr.write(`\nnpm run sandbox failed: ${(error as Error).stack ?? error}\n`);
	}
	await cleanupAll();
	process.exit(1);
});
