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
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log, step } from './log';
import { type N8nProcess } from './n8n';
import { freePort } from './ports';
import { onCleanup } from './processes';
import {
	ensureQueueServices,
	startPostgres,
	startRedis,
	type PostgresServer,
	type RedisServer,
} from './services';
import { startStack, type Stack, type StackOptions } from './stack';

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
}

export interface QueueStack extends Stack {
	workers: N8nProcess[];
	redis: RedisServer;
	postgres: PostgresServer;
	/** Environment shared by every n8n process of this stack (queue mode + database). */
	queueEnv: Record<string, string>;
}

/**
 * Redis + PostgreSQL + the stack (sandbox API, TLS front, n8n main) in queue mode + workers. The
 * main process receives webhooks and runs triggers; executions are queued in Redis and run by the
 * workers. `stop()` (and `cleanupAll()`, and the exit hook) end every process.
 */
export async function startQueueStack(options: QueueStackOptions): Promise<QueueStack> {
	const t0 = Date.now();
	const workerCount = options.workers ?? 2;
	const concurrency = options.concurrency ?? 10;
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
		if (process.env.LP_KEEP_WORKDIR === '1') log(`kept ${servicesDir}`);
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
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(postgres.port),
			DB_POSTGRESDB_DATABASE: postgres.database,
			DB_POSTGRESDB_USER: postgres.user,
			DB_POSTGRESDB_PASSWORD: '',
			...(options.n8nEnv ?? {}),
		};
		const stack = await startStack({ ...options, n8nEnv: queueEnv });

		const workers: N8nProcess[] = [];
		try {
			const specs = [];
			for (let i = 0; i < workerCount; i++) {
				specs.push({
					health: options.workerPorts?.[i] ?? (await freePort()),
					broker: await freePort(),
					name: `n8n-worker-${i + 1}`,
				});
			}
			// Workers start after the main process has migrated the database.
			await Promise.all(
				specs.map(async (spec) => {
					workers.push(
						await stack.host.startProcess({
							command: 'worker',
							args: [`--concurrency=${concurrency}`],
							port: spec.health,
							brokerPort: spec.broker,
							name: spec.name,
							echo: options.echo,
							env: {
								QUEUE_HEALTH_CHECK_ACTIVE: 'true',
								QUEUE_HEALTH_CHECK_PORT: String(spec.health),
							},
						}),
					);
				}),
			);
			workers.sort((a, b) => a.name.localeCompare(b.name));
			await step('workers healthy (/healthz/readiness)', async () => {
				for (const worker of workers)
					await waitHttpOk(`${worker.url}/healthz/readiness`, 60_000, worker);
			});
		} catch (error) {
			await stack.stop();
			throw error;
		}

		log(
			`${options.name}: queue-mode stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (Redis ${redis.port}, PostgreSQL ${postgres.port}, ${workers.length} workers)`,
		);
		return {
			...stack,
			workers,
			redis,
			postgres,
			queueEnv,
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
