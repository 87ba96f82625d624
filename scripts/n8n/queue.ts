// Queue mode (issue 8): n8n's distributed engine on one machine. Redis (the Bull job queue) and
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
import { onCleanup, runChecked, spawnManaged, type ManagedProcess } from './processes';
import { startStack, type Stack, type StackOptions } from './stack';

export interface QueueServiceBinaries {
	redisServer: string;
	/** Folder of initdb, postgres, createdb (e.g. /usr/lib/postgresql/15/bin). */
	pgBin: string;
}

function findRedisServer(): string | undefined {
	for (const dir of (process.env.PATH ?? '').split(path.delimiter).concat(['/usr/bin', '/usr/sbin', '/usr/local/bin'])) {
		const candidate = path.join(dir, 'redis-server');
		if (dir && fs.existsSync(candidate)) return candidate;
	}
	return undefined;
}

function findPgBin(): string | undefined {
	const root = '/usr/lib/postgresql';
	if (!fs.existsSync(root)) return undefined;
	const versions = fs
		.readdirSync(root)
		.filter((v) => /^\d+$/.test(v))
		.sort((a, b) => Number(b) - Number(a));
	for (const version of versions) {
		const bin = path.join(root, version, 'bin');
		if (['initdb', 'postgres', 'createdb'].every((f) => fs.existsSync(path.join(bin, f)))) return bin;
	}
	return undefined;
}

let aptUpdated = false;

/**
 * Redis and PostgreSQL from Debian's packages: `apt-get update` (once) and `apt-get install -y
 * redis-server postgresql` when either is missing; nothing when both are there. Needs root (CI
 * and the developers' machines run as root).
 */
export async function ensureQueueServices(): Promise<QueueServiceBinaries> {
	let redisServer = findRedisServer();
	let pgBin = findPgBin();
	const missing = [...(redisServer ? [] : ['redis-server']), ...(pgBin ? [] : ['postgresql'])];
	if (missing.length) {
		if (typeof process.getuid === 'function' && process.getuid() !== 0) {
			throw new Error(`queue mode needs ${missing.join(' and ')} from Debian's packages: run \`sudo apt-get install -y ${missing.join(' ')}\` once (or run as root)`);
		}
		const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
		const aptLog = path.join(os.tmpdir(), 'lp-apt-queue.log');
		if (!aptUpdated) {
			await step('apt-get update', () => runChecked('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update'], { env, logFile: aptLog, name: 'apt-get update', timeoutMs: 600_000 }));
			aptUpdated = true;
		}
		await step(`apt-get install -y ${missing.join(' ')} (log: ${aptLog})`, () =>
			runChecked('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '--no-install-recommends', ...missing], {
				env,
				logFile: aptLog,
				name: 'apt-get install',
				timeoutMs: 900_000,
			}),
		);
		redisServer = findRedisServer();
		pgBin = findPgBin();
		if (!redisServer || !pgBin) throw new Error(`apt-get install ${missing.join(' ')} finished but redis-server or PostgreSQL's binaries are still missing (log: ${aptLog})`);
	}
	return { redisServer: redisServer!, pgBin: pgBin! };
}

export interface RedisServer {
	port: number;
	process: ManagedProcess;
	stop(): Promise<void>;
}

/** redis-server on 127.0.0.1:<port>, no RDB snapshots, no AOF, in the foreground. */
export async function startRedis(options: { redisServer: string; port?: number; dir: string; logFile: string; echo?: boolean }): Promise<RedisServer> {
	const port = options.port ?? (await freePort());
	return step(`start Redis (127.0.0.1:${port}, no persistence)`, async () => {
		fs.mkdirSync(options.dir, { recursive: true });
		const proc = spawnManaged(
			'redis',
			options.redisServer,
			['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', options.dir, '--protected-mode', 'yes'],
			{ logFile: options.logFile, echo: options.echo },
		);
		await proc.waitForLine(/Ready to accept connections/i, 30_000);
		return { port, process: proc, stop: async () => void (await proc.stop(5000)) };
	});
}

export interface PostgresServer {
	port: number;
	database: string;
	user: string;
	dataDir: string;
	process: ManagedProcess;
	stop(): Promise<void>;
}

function postgresIds(): { uid: number; gid: number } {
	const line = fs
		.readFileSync('/etc/passwd', 'utf8')
		.split('\n')
		.find((l) => l.startsWith('postgres:'));
	if (!line) throw new Error('no `postgres` system user (it comes with Debian\'s postgresql package)');
	const [, , uid, gid] = line.split(':');
	return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A throwaway PostgreSQL cluster: `initdb` into `<baseDir>/data` and `postgres` in the foreground
 * on 127.0.0.1:<port> (socket in the same folder), run as the `postgres` user; one database
 * `n8n` owned by superuser `n8n`, trust authentication on loopback only.
 */
export async function startPostgres(options: { pgBin: string; port?: number; baseDir: string; logFile: string; echo?: boolean }): Promise<PostgresServer> {
	const port = options.port ?? (await freePort());
	const user = 'n8n';
	const database = 'n8n';
	const { uid, gid } = postgresIds();
	const dataDir = path.join(options.baseDir, 'data');
	const asPostgres = ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--'];
	const pgEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', HOME: options.baseDir };
	fs.mkdirSync(options.baseDir, { recursive: true });
	fs.chownSync(options.baseDir, uid, gid);
	fs.chmodSync(options.baseDir, 0o700);
	await step('initdb (throwaway PostgreSQL cluster)', () =>
		runChecked('setpriv', [...asPostgres, path.join(options.pgBin, 'initdb'), '-D', dataDir, '-U', user, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
			env: pgEnv,
			cwd: options.baseDir,
			logFile: options.logFile,
			name: 'initdb',
			timeoutMs: 180_000,
		}),
	);
	return step(`start PostgreSQL (127.0.0.1:${port})`, async () => {
		const proc = spawnManaged(
			'postgres',
			'setpriv',
			[
				...asPostgres,
				path.join(options.pgBin, 'postgres'),
				'-D', dataDir,
				'-p', String(port),
				'-k', options.baseDir,
				'-c', 'listen_addresses=127.0.0.1',
				'-c', 'fsync=off',
				'-c', 'synchronous_commit=off',
				'-c', 'full_page_writes=off',
				'-c', 'max_connections=200',
			],
			{ env: pgEnv, cwd: options.baseDir, logFile: options.logFile, echo: options.echo },
		);
		await proc.waitForLine(/database system is ready to accept connections/, 120_000);
		await runChecked(path.join(options.pgBin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', user, database], {
			env: pgEnv,
			name: 'createdb',
			timeoutMs: 60_000,
		});
		return {
			port,
			database,
			user,
			dataDir,
			process: proc,
			stop: async () => {
				if (proc.hasExited()) return;
				// SIGINT = "fast" shutdown (SIGTERM would wait for every client to disconnect).
				try {
					process.kill(proc.pid, 'SIGINT');
				} catch {
					/* gone */
				}
				await proc.stop(15_000);
			},
		};
	});
}

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
	const binaries = await step('ensure Redis and PostgreSQL (Debian packages)', () => ensureQueueServices());

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
		await Promise.all([redis?.stop().catch(() => undefined), postgres?.stop().catch(() => undefined)]);
		if (process.env.LP_KEEP_WORKDIR === '1') log(`kept ${servicesDir}`);
		else fs.rmSync(servicesDir, { recursive: true, force: true });
	};
	// Registered before the stack's own cleanup: cleanups run newest first, so n8n stops before
	// its database and queue.
	const unregisterServices = onCleanup(`${options.name} Redis + PostgreSQL`, stopServices);

	try {
		[redis, postgres] = await Promise.all([
			startRedis({ redisServer: binaries.redisServer, port: options.redisPort, dir: path.join(servicesDir, 'redis'), logFile: path.join(logDir, 'redis.log'), echo: options.echo }),
			startPostgres({ pgBin: binaries.pgBin, port: options.postgresPort, baseDir: path.join(servicesDir, 'pg'), logFile: path.join(logDir, 'postgres.log'), echo: options.echo }),
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
				specs.push({ health: options.workerPorts?.[i] ?? (await freePort()), broker: await freePort(), name: `n8n-worker-${i + 1}` });
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
							env: { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(spec.health) },
						}),
					);
				}),
			);
			workers.sort((a, b) => a.name.localeCompare(b.name));
			await step('workers healthy (/healthz/readiness)', async () => {
				for (const worker of workers) await waitHttpOk(`${worker.url}/healthz/readiness`, 60_000, worker);
			});
		} catch (error) {
			await stack.stop();
			throw error;
		}

		log(`${options.name}: queue-mode stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (Redis ${redis.port}, PostgreSQL ${postgres.port}, ${workers.length} workers)`);
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
		if (proc.proc?.hasExited()) throw new Error(`${proc.name} exited (log: ${proc.logFile}):\n${proc.proc.tail(30)}`);
		if (Date.now() > deadline) throw new Error(`${url} not healthy after ${timeoutMs} ms (log: ${proc.logFile})`);
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
