// Queue mode: n8n's distributed engine on one machine. Redis (the Bull job queue) and
// PostgreSQL (the one database every process shares), both from Debian's packages, then the usual
// stack (sandbox API, TLS front, n8n main) in queue mode, then `n8n worker` processes.
//
// - Redis and PostgreSQL are installed with apt-get when missing (idempotent: nothing is run
//   when the binaries are there), started as children of this process on 127.0.0.1 and a free
//   port, with no persistence, and killed with the rest.
// - PostgreSQL, not SQLite: n8n itself warns "Scaling mode is not officially supported with
//   sqlite. Please use PostgreSQL instead." (packages/cli/src/commands/base-command.ts), and a
//   SQLite file written by three processes at once is locked by whichever writes. The cluster is a
//   throwaway one: `initdb` into a temp folder, then the `postgres` server in the foreground, both
//   as the `postgres` user (`setpriv`, which execs without a forked parent: PostgreSQL refuses to
//   run as root), `fsync` off (the data is thrown away at the end).
// - Every n8n process gets the same N8N_USER_FOLDER (so the community package installed in
//   `.n8n/nodes` is loaded by the workers too), the same N8N_ENCRYPTION_KEY, and its own
//   N8N_PORT / N8N_RUNNERS_BROKER_PORT / QUEUE_HEALTH_CHECK_PORT.
// - With `webhookProcesses: N`, N `n8n webhook` processes serve the production webhooks: the TLS
//   front spreads `/webhook/` requests round-robin over them (and records which one served each
//   request), the main gets N8N_DISABLE_PRODUCTION_MAIN_PROCESS=true (it still registers the
//   triggers on activation and serves the editor, REST and `/webhook-test/`), and every process
//   gets DB_POSTGRESDB_POOL_SIZE=20 and DB_POSTGRESDB_CONNECTION_TIMEOUT=120000 (with n8n's
//   defaults, webhook processes answered requests of a burst 500 "timeout exceeded when trying
//   to connect", and executions failed with it; the 503 "Database is not ready!" they answered
//   too is the ping time-out every harness process gets, n8n.ts).
// - `webhookSettings: 'recommended'` gives the webhook processes the n8n settings this project
//   recommends for them (RECOMMENDED_WEBHOOK_PROCESS_ENV, docs/webhook-throughput.md); the
//   default, 'n8n', leaves n8n's own defaults. `webhookEnv` adds settings to the webhook processes
//   only (after both).
// - `stopN8n()` / `startN8n()` stop and start every n8n process (main, workers, webhook
//   processes) while PostgreSQL, Redis, the sandbox API and the front keep running: an outage of
//   n8n, then a restart on the same database, ports and user folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log, step } from './log';
import { type N8nProcess } from './n8n';
import { freePort } from './ports';
import { onCleanup } from './processes';
import {
	ensureQueueServices,
	postgresEnv,
	startPostgres,
	startRedis,
	type PostgresServer,
	type RedisServer,
} from './services';
import { keepWorkFolders, startStack, type Stack, type StackOptions } from './stack';

export {
	ensureQueueServices,
	startPostgres,
	startRedis,
	type PostgresServer,
	type QueueServiceBinaries,
	type RedisServer,
} from './services';

export interface QueueStackOptions extends StackOptions {
	/** Number of `n8n worker` processes (default 2). */
	workers?: number;
	/** `n8n worker --concurrency=N` (default 10, n8n's own default; n8n refuses < 5). */
	concurrency?: number;
	/** Fixed ports of Redis and PostgreSQL (default: free ones). */
	redisPort?: number;
	postgresPort?: number;
	/** Fixed worker health ports (QUEUE_HEALTH_CHECK_PORT), one per worker (default: free ones). */
	workerPorts?: number[];
	/**
	 * Number of `n8n webhook` processes behind the front's round-robin (default 0: the main serves
	 * production webhooks). With 1 or more, the main no longer serves them.
	 */
	webhookProcesses?: number;
	/**
	 * n8n settings of the `n8n webhook` processes: 'n8n' (default) leaves n8n's defaults,
	 * 'recommended' applies RECOMMENDED_WEBHOOK_PROCESS_ENV (see there). Main and workers keep
	 * n8n's defaults either way.
	 */
	webhookSettings?: 'n8n' | 'recommended';
	/** Extra environment of the `n8n webhook` processes only (after `n8nEnv` and `webhookSettings`). */
	webhookEnv?: Record<string, string>;
	/** Extra environment of the `n8n worker` processes only (after `n8nEnv`), e.g. a profiler. */
	workerEnv?: Record<string, string>;
}

export interface QueueStack extends Stack {
	workers: N8nProcess[];
	/** The `n8n webhook` processes, named `n8n-webhook-1`, ... (the front's backend names). */
	webhookProcesses: N8nProcess[];
	redis: RedisServer;
	postgres: PostgresServer;
	/** Environment shared by every n8n process of this stack (queue mode + database). */
	queueEnv: Record<string, string>;
	/** What the `n8n webhook` processes get on top of `queueEnv` (`webhookSettings` + `webhookEnv`). */
	webhookEnv: Record<string, string>;
	/**
	 * Stops every n8n process (webhook processes and workers first, then the main): SIGTERM, then
	 * SIGKILL after `graceMs` (default 30 s, n8n's own graceful shutdown time).
	 */
	stopN8n(graceMs?: number): Promise<void>;
	/**
	 * Starts them again on the same database and ports: the main first (it must be ready), then the
	 * rest; with `clockOffsetMs`, their clocks that far ahead of the wall clock (N8nHost.clockOffsetMs).
	 */
	startN8n(options?: { clockOffsetMs?: number }): Promise<void>;
}

/**
 * The environment every process gets with dedicated webhook processes (see the header). n8n's
 * PostgreSQL pool holds 2 connections and a request waits 20 s for one by default: under a burst
 * of 300 deliveries on 2 busy cores the webhook processes answered 500, and executions failed,
 * with "timeout exceeded when trying to connect" (still a few with a pool of 10), some after n8n
 * had answered the delivery 200: lost events that no trigger can recover. A pool of 20 per process
 * (PostgreSQL here allows 200 connections) and a 2-minute wait keep the database out of the way.
 */
const WEBHOOK_PROCESS_ENV = {
	DB_POSTGRESDB_POOL_SIZE: '20',
	DB_POSTGRESDB_CONNECTION_TIMEOUT: '120000',
};

/**
 * The n8n settings recommended for `n8n webhook` processes (docs/webhook-throughput.md), applied
 * with `webhookSettings: 'recommended'`. Under n8n's default (`N8N_EXPRESSION_ENGINE=vm`) every
 * webhook request whose start node is not n8n's own Webhook node takes a fresh V8 isolate up front
 * (webhooks/live-webhooks.js), about 100 ms of CPU; with lazy acquisition it is made only when an
 * expression is evaluated, and the trigger (typeVersion 2, not 1) evaluates none on that path.
 */
export const RECOMMENDED_WEBHOOK_PROCESS_ENV: Readonly<Record<string, string>> = {
	N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true',
};

/**
 * Redis + PostgreSQL + the stack (sandbox API, TLS front, n8n main) in queue mode + workers. The
 * main process receives webhooks and runs triggers; executions are queued in Redis and run by the
 * workers. `stop()` (and `cleanupAll()`, and the exit hook) end every process.
 */
export async function startQueueStack(options: QueueStackOptions): Promise<QueueStack> {
	const t0 = Date.now();
	const workerCount = options.workers ?? 2;
	const concurrency = options.concurrency ?? 10;
	const webhookCount = options.webhookProcesses ?? 0;
	const webhookEnv: Record<string, string> = {
		...(options.webhookSettings === 'recommended' ? RECOMMENDED_WEBHOOK_PROCESS_ENV : {}),
		...(options.webhookEnv ?? {}),
	};
	const binaries = await step('ensure Redis and PostgreSQL (Debian packages)', () =>
		ensureQueueServices(),
	);

	// Redis and PostgreSQL live outside the stack's work folder: PostgreSQL's folder belongs to the
	// `postgres` user, and both must outlive the n8n processes during shutdown.
	const servicesDir = fs.mkdtempSync(path.join(os.tmpdir(), `lp-${options.name}-services-`));
	fs.chmodSync(servicesDir, 0o755);
	const logDir = path.join(servicesDir, 'logs');
	fs.mkdirSync(logDir, { recursive: true });
	let redis: RedisServer | undefined;
	let postgres: PostgresServer | undefined;
	let servicesStopped = false;
	const stopServices = async () => {
		if (servicesStopped) return;
		servicesStopped = true;
		await Promise.all([
			redis?.stop().catch(() => undefined),
			postgres?.stop().catch(() => undefined),
		]);
		if (keepWorkFolders()) log(`kept ${servicesDir}`);
		else fs.rmSync(servicesDir, { recursive: true, force: true });
	};
	// Registered before the stack's own cleanup: cleanups run newest first, so n8n stops before
	// its database and queue.
	const unregisterServices = onCleanup(`${options.name} Redis + PostgreSQL`, stopServices);

	try {
		[redis, postgres] = await Promise.all([
			startRedis({
				redisServer: binaries.redisServer,
				port: options.redisPort,
				dir: path.join(servicesDir, 'redis'),
				logFile: path.join(logDir, 'redis.log'),
				echo: options.echo,
			}),
			startPostgres({
				pgBin: binaries.pgBin,
				port: options.postgresPort,
				baseDir: path.join(servicesDir, 'pg'),
				logFile: path.join(logDir, 'postgres.log'),
				echo: options.echo,
			}),
		]);
		const queueEnv: Record<string, string> = {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			...postgresEnv(postgres),
			...(webhookCount > 0 ? WEBHOOK_PROCESS_ENV : {}),
			...(options.n8nEnv ?? {}),
		};
		const stack = await startStack({
			...options,
			n8nEnv: queueEnv,
			mainEnv:
				webhookCount > 0
					? { N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true', ...(options.mainEnv ?? {}) }
					: options.mainEnv,
		});

		const workers: N8nProcess[] = [];
		const webhookProcesses: N8nProcess[] = [];
		try {
			for (let i = 0; i < workerCount; i++) {
				const health = options.workerPorts?.[i] ?? (await freePort());
				workers.push(
					stack.host.addProcess({
						command: 'worker',
						args: [`--concurrency=${concurrency}`],
						port: health,
						brokerPort: await freePort(),
						name: `n8n-worker-${i + 1}`,
						echo: options.echo,
						env: {
							QUEUE_HEALTH_CHECK_ACTIVE: 'true',
							QUEUE_HEALTH_CHECK_PORT: String(health),
							...(options.workerEnv ?? {}),
						},
					}),
				);
			}
			for (let i = 0; i < webhookCount; i++) {
				webhookProcesses.push(
					stack.host.addProcess({
						command: 'webhook',
						port: await freePort(),
						brokerPort: await freePort(),
						name: `n8n-webhook-${i + 1}`,
						echo: options.echo,
						env: webhookEnv,
					}),
				);
			}
			// Workers and webhook processes start after the main process has migrated the database.
			await startSecondaries(workers, webhookProcesses);
			stack.front.setWebhookBackends(
				webhookProcesses.map((p) => ({ name: p.name, port: p.options.port })),
			);
		} catch (error) {
			await stack.stop();
			throw error;
		}

		const stopN8n = (graceMs?: number) =>
			step(`${options.name}: stop every n8n process`, async () => {
				// Webhook processes and workers first (nothing new arrives, running executions finish),
				// then the main.
				await Promise.all([...webhookProcesses, ...workers].map((p) => p.stop(graceMs)));
				await stack.main.stop(graceMs);
			});
		const startN8n = ({ clockOffsetMs }: { clockOffsetMs?: number } = {}) =>
			step(`${options.name}: start every n8n process`, async () => {
				if (clockOffsetMs !== undefined) stack.host.clockOffsetMs = clockOffsetMs;
				await stack.main.start();
				await stack.client.login(stack.owner);
				await startSecondaries(workers, webhookProcesses);
			});

		log(
			`${options.name}: queue-mode stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (Redis ${redis.port}, PostgreSQL ${postgres.port}, ${workers.length} workers, ${webhookProcesses.length} webhook processes)`,
		);
		return {
			...stack,
			workers,
			webhookProcesses,
			redis,
			postgres,
			queueEnv,
			webhookEnv,
			stopN8n,
			startN8n,
			stop: async () => {
				try {
					await stack.stop();
				} finally {
					unregisterServices();
					await step(`${options.name}: stop Redis + PostgreSQL`, stopServices);
				}
			},
		};
	} catch (error) {
		unregisterServices();
		await stopServices();
		throw error;
	}
}

/** Starts (or restarts) the workers and webhook processes side by side and waits until each is ready. */
async function startSecondaries(workers: N8nProcess[], webhooks: N8nProcess[]): Promise<void> {
	await Promise.all([...workers, ...webhooks].map((p) => p.start()));
	await step('workers and webhook processes healthy (/healthz/readiness)', async () => {
		for (const p of [...workers, ...webhooks])
			await waitHttpOk(`${p.url}/healthz/readiness`, 60_000, p);
	});
}

async function waitHttpOk(url: string, timeoutMs: number, proc: N8nProcess): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
			await response.text();
			if (response.ok) return;
		} catch {
			/* not yet */
		}
		if (proc.proc?.hasExited())
			throw new Error(`${proc.name} exited (log: ${proc.logFile}):\n${proc.proc.tail(30)}`);
		if (Date.now() > deadline)
			throw new Error(`${url} not healthy after ${timeoutMs} ms (log: ${proc.logFile})`);
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
}

/** Execution ids each worker logged as started (`Worker started execution <id>`), by worker name. */
export function executionsByWorker(workers: N8nProcess[]): Map<string, Set<string>> {
	const result = new Map<string, Set<string>>();
	for (const worker of workers) {
		const ids = new Set<string>();
		for (const line of worker.logLines(/Worker started execution/)) {
			const match = line.match(/Worker started execution (\d+)/);
			if (match) ids.add(match[1]);
		}
		result.set(worker.name, ids);
	}
	return result;
}
