// Redis and PostgreSQL from Debian's packages, started as children of the harness on loopback,
// for queue mode (Bull's queue + the shared database) and for any stack whose n8n processes share
// one database (several processes writing one SQLite file lock each other out: n8n itself
// recommends PostgreSQL for more than one process).
//
// - Installed with apt-get when missing (idempotent: nothing runs when the binaries are there).
// - Throwaway: no persistence for Redis; PostgreSQL is `initdb` into a temp folder and runs in
//   the foreground as the `postgres` user (`setpriv`, which execs without a forked parent:
//   PostgreSQL refuses to run as root), `fsync` off (the data is thrown away at the end).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { step } from './log';
import { freePort } from './ports';
import { runChecked, spawnManaged, type ManagedProcess } from './processes';

export interface QueueServiceBinaries {
	redisServer: string;
	/** Folder of initdb, postgres, createdb (e.g. /usr/lib/postgresql/15/bin). */
	pgBin: string;
}

function findRedisServer(): string | undefined {
	for (const dir of (process.env.PATH ?? '')
		.split(path.delimiter)
		.concat(['/usr/bin', '/usr/sbin', '/usr/local/bin'])) {
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
		if (['initdb', 'postgres', 'createdb'].every((f) => fs.existsSync(path.join(bin, f))))
			return bin;
	}
	return undefined;
}

let aptUpdated = false;

/**
 * `apt-get install -y <packages>` from Debian's packages, with one `apt-get update` per process
 * before the first install. Needs root (CI and the developers' machines run as root); `purpose`
 * names what needs the packages in the error otherwise. Returns the log file.
 */
export async function aptInstall(packages: string[], purpose: string): Promise<string> {
	if (typeof process.getuid === 'function' && process.getuid() !== 0) {
		throw new Error(
			`${purpose} needs ${packages.join(' and ')} from Debian's packages: run \`sudo apt-get install -y ${packages.join(' ')}\` once (or run as root)`,
		);
	}
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	const aptLog = path.join(os.tmpdir(), `lp-apt-${packages.join('-')}.log`);
	if (!aptUpdated) {
		await step('apt-get update', () =>
			runChecked('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update'], {
				env,
				logFile: aptLog,
				name: 'apt-get update',
				timeoutMs: 600_000,
			}),
		);
		aptUpdated = true;
	}
	await step(`apt-get install -y ${packages.join(' ')} (log: ${aptLog})`, () =>
		runChecked(
			'apt-get',
			['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '--no-install-recommends', ...packages],
			{ env, logFile: aptLog, name: 'apt-get install', timeoutMs: 900_000 },
		),
	);
	return aptLog;
}

/**
 * Redis and PostgreSQL from Debian's packages, installed when either is missing; nothing runs
 * when both are there.
 */
export async function ensureQueueServices(): Promise<QueueServiceBinaries> {
	let redisServer = findRedisServer();
	let pgBin = findPgBin();
	const missing = [...(redisServer ? [] : ['redis-server']), ...(pgBin ? [] : ['postgresql'])];
	if (missing.length) {
		const aptLog = await aptInstall(missing, 'queue mode');
		redisServer = findRedisServer();
		pgBin = findPgBin();
		if (!redisServer || !pgBin)
			throw new Error(
				`apt-get install ${missing.join(' ')} finished but redis-server or PostgreSQL's binaries are still missing (log: ${aptLog})`,
			);
	}
	return { redisServer: redisServer!, pgBin: pgBin! };
}

export interface RedisServer {
	port: number;
	process: ManagedProcess;
	stop(): Promise<void>;
}

/** redis-server on 127.0.0.1:<port>, no RDB snapshots, no AOF, in the foreground. */
export async function startRedis(options: {
	redisServer: string;
	port?: number;
	dir: string;
	logFile: string;
	echo?: boolean;
}): Promise<RedisServer> {
	const port = options.port ?? (await freePort());
	return step(`start Redis (127.0.0.1:${port}, no persistence)`, async () => {
		fs.mkdirSync(options.dir, { recursive: true });
		const proc = spawnManaged(
			'redis',
			options.redisServer,
			[
				'--port',
				String(port),
				'--bind',
				'127.0.0.1',
				'--save',
				'',
				'--appendonly',
				'no',
				'--daemonize',
				'no',
				'--dir',
				options.dir,
				'--protected-mode',
				'yes',
			],
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
	/** Runs SQL in the n8n database with psql (as its superuser). */
	sql(statement: string): Promise<string>;
	stop(): Promise<void>;
}

/** The environment that points an n8n process at this PostgreSQL (every process of a stack shares it). */
export function postgresEnv(postgres: PostgresServer): Record<string, string> {
	return {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(postgres.port),
		DB_POSTGRESDB_DATABASE: postgres.database,
		DB_POSTGRESDB_USER: postgres.user,
		DB_POSTGRESDB_PASSWORD: '',
	};
}

function postgresIds(): { uid: number; gid: number } {
	const line = fs
		.readFileSync('/etc/passwd', 'utf8')
		.split('\n')
		.find((l) => l.startsWith('postgres:'));
	if (!line)
		throw new Error("no `postgres` system user (it comes with Debian's postgresql package)");
	const [, , uid, gid] = line.split(':');
	return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A throwaway PostgreSQL cluster: `initdb` into `<baseDir>/data` and `postgres` in the foreground
 * on 127.0.0.1:<port> (socket in the same folder), run as the `postgres` user; one database
 * `n8n` owned by superuser `n8n`, trust authentication on loopback only.
 */
export async function startPostgres(options: {
	pgBin: string;
	port?: number;
	baseDir: string;
	logFile: string;
	echo?: boolean;
}): Promise<PostgresServer> {
	const port = options.port ?? (await freePort());
	const user = 'n8n';
	const database = 'n8n';
	const { uid, gid } = postgresIds();
	const dataDir = path.join(options.baseDir, 'data');
	const asPostgres = ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--'];
	const pgEnv = {
		PATH: process.env.PATH ?? '/usr/bin:/bin',
		LANG: 'C',
		LC_ALL: 'C',
		HOME: options.baseDir,
	};
	fs.mkdirSync(options.baseDir, { recursive: true });
	fs.chownSync(options.baseDir, uid, gid);
	fs.chmodSync(options.baseDir, 0o700);
	await step('initdb (throwaway PostgreSQL cluster)', () =>
		runChecked(
			'setpriv',
			[
				...asPostgres,
				path.join(options.pgBin, 'initdb'),
				'-D',
				dataDir,
				'-U',
				user,
				'-A',
				'trust',
				'-E',
				'UTF8',
				'--locale=C',
				'--no-sync',
			],
			{
				env: pgEnv,
				cwd: options.baseDir,
				logFile: options.logFile,
				name: 'initdb',
				timeoutMs: 180_000,
			},
		),
	);
	return step(`start PostgreSQL (127.0.0.1:${port})`, async () => {
		const proc = spawnManaged(
			'postgres',
			'setpriv',
			[
				...asPostgres,
				path.join(options.pgBin, 'postgres'),
				'-D',
				dataDir,
				'-p',
				String(port),
				'-k',
				options.baseDir,
				'-c',
				'listen_addresses=127.0.0.1',
				'-c',
				'fsync=off',
				'-c',
				'synchronous_commit=off',
				'-c',
				'full_page_writes=off',
				'-c',
				'max_connections=200',
			],
			{ env: pgEnv, cwd: options.baseDir, logFile: options.logFile, echo: options.echo },
		);
		await proc.waitForLine(/database system is ready to accept connections/, 120_000);
		await runChecked(
			path.join(options.pgBin, 'createdb'),
			['-h', '127.0.0.1', '-p', String(port), '-U', user, database],
			{
				env: pgEnv,
				name: 'createdb',
				timeoutMs: 60_000,
			},
		);
		return {
			port,
			database,
			user,
			dataDir,
			process: proc,
			sql: async (statement: string) =>
				(
					await runChecked(
						path.join(options.pgBin, 'psql'),
						[
							'-h',
							'127.0.0.1',
							'-p',
							String(port),
							'-U',
							user,
							'-d',
							database,
							'-v',
							'ON_ERROR_STOP=1',
							'-At',
							'-c',
							statement,
						],
						{
							env: pgEnv,
							name: 'psql',
							timeoutMs: 60_000,
						},
					)
				).stdout,
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
