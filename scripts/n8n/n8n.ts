// A real n8n: one "host" (user folder, encryption key, database) shared by any number of n8n
// processes: the main process started here, CLI commands (`import:*`, `export:*`, `execute`), and
// later (queue mode) workers, which only need another `startProcess('worker', ...)` with
// the same host and a shared database in `env` (DB_TYPE=postgresdb ...).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log, step } from './log';
import { recordStartTime } from './slowness';
import { n8nPaths, type N8nPaths } from './paths';
import { freePort } from './ports';
import { run, spawnManaged, type ManagedProcess } from './processes';
import { N8nClient } from './client';

export interface N8nHostOptions {
	/** N8N_USER_FOLDER: n8n keeps its data (SQLite database, config, `nodes/`) in `<userFolder>/.n8n`. */
	userFolder: string;
	/** Stable across restarts of the same user folder (credentials are encrypted with it). */
	encryptionKey?: string;
	/** Public base URL of webhooks (the TLS front), e.g. `https://127.0.0.1:5681/`. */
	webhookUrl?: string;
	/** Extra environment for every n8n process of this host (database settings, queue mode ...). */
	env?: Record<string, string>;
	/** Where process logs go; default `<userFolder>/logs`. */
	logDir?: string;
	/** N8N_LOG_LEVEL; default `info` (`LP_N8N_LOG_LEVEL` overrides). */
	logLevel?: string;
	/** Interface n8n listens on; default 127.0.0.1. */
	listenAddress?: string;
	paths?: N8nPaths;
}

export interface CredentialImport {
	id: string;
	name: string;
	type: string;
	/** Plain data: `import:credentials` encrypts an object. */
	data: Record<string, unknown>;
}

export interface WorkflowJson {
	id?: string;
	name: string;
	nodes: Array<Record<string, unknown>>;
	connections: Record<string, unknown>;
	settings?: Record<string, unknown>;
	active?: boolean;
	[key: string]: unknown;
}

export interface ExecuteResult {
	code: number;
	signal: NodeJS.Signals | null;
	ok: boolean;
	stdout: string;
	stderr: string;
	/** The run data printed by `n8n execute --rawOutput` when it succeeded. */
	data?: {
		data?: { resultData?: { runData?: Record<string, unknown>; error?: unknown } };
		status?: string;
		[key: string]: unknown;
	};
}

let cliCounter = 0;

export class N8nHost {
	readonly userFolder: string;
	readonly dataFolder: string;
	readonly encryptionKey: string;
	readonly logDir: string;
	readonly paths: N8nPaths;
	webhookUrl?: string;
	extraEnv: Record<string, string>;
	readonly processes: N8nProcess[] = [];

	constructor(readonly options: N8nHostOptions) {
		this.userFolder = options.userFolder;
		this.dataFolder = path.join(this.userFolder, '.n8n');
		this.encryptionKey = options.encryptionKey ?? randomBytes(24).toString('hex');
		this.logDir = options.logDir ?? path.join(this.userFolder, 'logs');
		this.paths = options.paths ?? n8nPaths();
		this.webhookUrl = options.webhookUrl;
		this.extraEnv = { ...(options.env ?? {}) };
		fs.mkdirSync(this.dataFolder, { recursive: true });
		fs.mkdirSync(this.logDir, { recursive: true });
	}

	/**
	 * How far ahead of the wall clock the n8n processes started from now on run (0: not at all):
	 * clock-offset.cjs is preloaded into them. Tests move it with the sandbox's clock.
	 */
	clockOffsetMs = 0;

	/**
	 * A file the n8n processes started from now on read their clock's offset from, on every change
	 * (clock-offset.cjs; added to `clockOffsetMs`): `moveClock` moves running processes' clocks.
	 */
	clockOffsetFile?: string;

	/** Moves the clocks of the running n8n processes `ms` further ahead (needs `clockOffsetFile`). */
	async moveClock(ms: number): Promise<void> {
		const file = this.clockOffsetFile;
		if (!file) throw new Error('moveClock needs clockOffsetFile, set before n8n starts');
		const now = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8').trim() || 0) : 0;
		fs.writeFileSync(file, String(now + ms));
		// the processes look at the file every 100 ms
		await new Promise((resolve) => setTimeout(resolve, 500));
	}

	/**
	 * A clean environment: nothing of the caller's (jest sets NODE_ENV=test, which makes n8n refuse
	 * to load nodes), Node 24 first on PATH, and n8n's settings.
	 */
	env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
		const keep = ['HOME', 'USER', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL', 'TERM'];
		const env: NodeJS.ProcessEnv = {};
		for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
		Object.assign(env, {
			PATH: `${path.dirname(this.paths.node24Bin)}${path.delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
			NODE_ENV: 'production',
			N8N_USER_FOLDER: this.userFolder,
			N8N_ENCRYPTION_KEY: this.encryptionKey,
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_HIRING_BANNER_ENABLED: 'false',
			N8N_SECURE_COOKIE: 'false',
			N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
			N8N_PUBLIC_API_SWAGGERUI_DISABLED: 'true',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
			N8N_LOG_LEVEL: process.env.LP_N8N_LOG_LEVEL || this.options.logLevel || 'info',
			...((this.clockOffsetMs !== 0 || this.clockOffsetFile) && {
				LP_CLOCK_OFFSET_MS: String(this.clockOffsetMs),
				...(this.clockOffsetFile ? { LP_CLOCK_OFFSET_FILE: this.clockOffsetFile } : {}),
				NODE_OPTIONS: `--require ${path.join(__dirname, 'clock-offset.cjs')}`,
			}),
			N8N_LOG_OUTPUT: 'console',
			...(process.env.LP_N8N_LOG_FORMAT ? { N8N_LOG_FORMAT: process.env.LP_N8N_LOG_FORMAT } : {}),
			N8N_PROXY_HOPS: '1',
			N8N_LISTEN_ADDRESS: this.options.listenAddress ?? '127.0.0.1',
			// Node's on-disk compile cache (Node >= 22): n8n loads thousands of modules at every start
			// and every CLI command; cached bytecode saves seconds each time (checked by source hash).
			NODE_COMPILE_CACHE: path.join(this.paths.cache, 'compile-cache'),
			// n8n answers every request 503 "Database is not ready!" from a database ping slower
			// than this until the next good one (2 s later); its default, 5 s, is met by a busy
			// 2-core machine (a CI run beside another n8n stack), and the harness tests this
			// package, not n8n's patience. fetch.ts repeats such refusals should a slower one come.
			DB_PING_TIMEOUT_MS: '30000',
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
			EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
			EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
			...(this.webhookUrl ? { WEBHOOK_URL: this.webhookUrl } : {}),
			...this.extraEnv,
			...extra,
		});
		return env;
	}

	/** Starts an n8n process (`start`, `worker` or `webhook`) of this host. */
	async startProcess(options: StartN8nOptions): Promise<N8nProcess> {
		const proc = this.addProcess(options);
		await proc.start();
		return proc;
	}

	/** An n8n process of this host, registered (stopped with the host's processes) but not started yet. */
	addProcess(options: StartN8nOptions): N8nProcess {
		const proc = new N8nProcess(this, options);
		this.processes.push(proc);
		return proc;
	}

	/** Installs a packed tarball of a community package into `<userFolder>/.n8n/nodes` with npm. */
	async installCommunityPackage(tarball: string): Promise<void> {
		const { installTarball } = await import('./pack');
		await installTarball(tarball, path.join(this.dataFolder, 'nodes'));
	}

	/** Runs an n8n CLI command as its own process (own task-broker port) sharing this host's database. */
	async cli(
		args: string[],
		options: { timeoutMs?: number; env?: Record<string, string> } = {},
	): Promise<{ code: number; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
		const brokerPort = await freePort();
		const name = `n8n ${args[0]}`;
		const logFile = path.join(
			this.logDir,
			`cli-${++cliCounter}-${args[0].replace(/[^a-z0-9]+/gi, '_')}.log`,
		);
		const result = await run(this.paths.node24Bin, [this.paths.n8nBin, ...args], {
			name,
			env: this.env({
				N8N_RUNNERS_BROKER_PORT: String(brokerPort),
				N8N_LOG_LEVEL: 'info',
				...(options.env ?? {}),
			}),
			cwd: this.userFolder,
			logFile,
			timeoutMs: options.timeoutMs ?? 180_000,
		});
		if (result.signal)
			log(`${name} ended by ${result.signal} (log: ${logFile}); its printed result decides`);
		return result;
	}

	private tempFile(name: string): string {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-n8n-cli-'));
		return path.join(dir, name);
	}

	/** `n8n import:credentials` (plain `data` is encrypted by n8n on import). */
	async importCredentials(credentials: CredentialImport[]): Promise<void> {
		await this.importJson('import:credentials', credentials, 'credentials.json');
	}

	/** `n8n import:workflow` of several workflows at once (imported inactive; activate through the API). */
	async importWorkflows(workflows: WorkflowJson[]): Promise<void> {
		await this.importJson('import:workflow', workflows, 'workflows.json');
	}

	/** Writes `items` to a temp JSON file and runs `n8n <command> --input=<file>`; throws unless n8n says it imported. */
	private async importJson(
		command: 'import:credentials' | 'import:workflow',
		items: Array<{ id?: string; name: string }>,
		fileName: string,
	): Promise<void> {
		await step(`n8n ${command} (${items.map((i) => i.id ?? i.name).join(', ')})`, async () => {
			const file = this.tempFile(fileName);
			fs.writeFileSync(file, JSON.stringify(items, null, 2));
			try {
				const result = await this.cli([command, `--input=${file}`]);
				if (!/Successfully imported/.test(result.stdout + result.stderr)) {
					throw new Error(
						`${command} failed (code ${result.code}):\n${(result.stdout + result.stderr).slice(-3000)}`,
					);
				}
			} finally {
				fs.rmSync(path.dirname(file), { recursive: true, force: true });
			}
		});
	}

	/** `n8n export:credentials --decrypted --all`: what n8n has stored, in clear. */
	async exportCredentials(): Promise<
		Array<{ id: string; name: string; type: string; data: Record<string, unknown> }>
	> {
		return step('n8n export:credentials --decrypted', async () => {
			const file = this.tempFile('export.json');
			try {
				const result = await this.cli([
					'export:credentials',
					'--all',
					'--decrypted',
					`--output=${file}`,
				]);
				if (!fs.existsSync(file)) {
					throw new Error(
						`export:credentials failed (code ${result.code}):\n${(result.stdout + result.stderr).slice(-3000)}`,
					);
				}
				return JSON.parse(fs.readFileSync(file, 'utf8'));
			} finally {
				fs.rmSync(path.dirname(file), { recursive: true, force: true });
			}
		});
	}

	/** The stored (decrypted) data of one credential. */
	async storedCredential(id: string): Promise<Record<string, unknown>> {
		const all = await this.exportCredentials();
		const found = all.find((c) => c.id === id);
		if (!found)
			throw new Error(
				`credential ${id} not found in export (have: ${all.map((c) => c.id).join(', ')})`,
			);
		return found.data;
	}

	/**
	 * `n8n execute --id=<id>`: runs the workflow (from its manual trigger) in a separate process that
	 * shares the database with the running n8n.
	 */
	async executeCli(
		workflowId: string,
		options: { timeoutMs?: number; env?: Record<string, string> } = {},
	): Promise<ExecuteResult> {
		const result = await this.cli(['execute', `--id=${workflowId}`, '--rawOutput'], {
			timeoutMs: options.timeoutMs ?? 300_000,
			env: options.env,
		});
		// The run data is printed as pretty JSON between a line `{` and a line `}`, among log lines.
		let data: ExecuteResult['data'];
		const lines = result.stdout.split('\n');
		const first = lines.findIndex((l) => l === '{');
		const last = lines.lastIndexOf('}');
		if (first >= 0 && last > first) {
			try {
				data = JSON.parse(lines.slice(first, last + 1).join('\n'));
			} catch {
				data = undefined;
			}
		}
		// n8n 2.40.7's CLI sometimes dies with SIGSEGV while tearing down the isolated-vm expression
		// engine, after the run was stored and printed (seen in about 1 run in 3, also with
		// --no-node-snapshot; never with N8N_EXPRESSION_ENGINE=legacy). The printed run data decides.
		const ok = data !== undefined && data.status === 'success' && !data.data?.resultData?.error;
		return {
			code: result.code,
			signal: result.signal,
			ok,
			stdout: result.stdout,
			stderr: result.stderr,
			data,
		};
	}
}

export interface StartN8nOptions {
	/** `start` (main, default); `worker` and `webhook` for queue mode. */
	command?: 'start' | 'worker' | 'webhook';
	/** N8N_PORT (HTTP of the main process). */
	port: number;
	/** N8N_RUNNERS_BROKER_PORT: must differ between processes. */
	brokerPort: number;
	name?: string;
	env?: Record<string, string>;
	/** Readiness time-out; default 240 s. */
	readyTimeoutMs?: number;
	/** Extra command-line arguments after the command (e.g. `--concurrency=10` for a worker). */
	args?: string[];
	/** Also echo n8n's output to stderr. */
	echo?: boolean;
}

export class N8nProcess {
	proc?: ManagedProcess;
	readonly name: string;
	readonly client: N8nClient;
	private starts = 0;

	constructor(
		readonly host: N8nHost,
		readonly options: StartN8nOptions,
	) {
		this.name = options.name ?? `n8n-${options.command ?? 'start'}`;
		this.client = new N8nClient(this.url);
	}

	get url(): string {
		return `http://127.0.0.1:${this.options.port}`;
	}

	get logFile(): string {
		return path.join(this.host.logDir, `${this.name}.log`);
	}

	async start(): Promise<void> {
		if (this.proc && !this.proc.hasExited()) throw new Error(`${this.name} is already running`);
		const command = this.options.command ?? 'start';
		this.starts++;
		await step(
			`start ${this.name} (port ${this.options.port}, broker ${this.options.brokerPort})${this.starts > 1 ? ` #${this.starts}` : ''}`,
			async () => {
				fs.appendFileSync(
					this.logFile,
					`\n===== ${new Date().toISOString()} n8n ${command} (start #${this.starts})\n`,
				);
				this.proc = spawnManaged(
					this.name,
					this.host.paths.node24Bin,
					[this.host.paths.n8nBin, command, ...(this.options.args ?? [])],
					{
						cwd: this.host.userFolder,
						env: this.host.env({
							N8N_PORT: String(this.options.port),
							N8N_RUNNERS_BROKER_PORT: String(this.options.brokerPort),
							...(this.options.env ?? {}),
						}),
						logFile: this.logFile,
						echo: this.options.echo,
					},
				);
				if (command === 'start') {
					const startedAt = Date.now();
					await this.waitReady(this.options.readyTimeoutMs ?? 240_000);
					recordStartTime(Date.now() - startedAt);
				} else
					await this.proc.waitForLine(
						/n8n worker is now ready|Webhook listener waiting for requests/,
						this.options.readyTimeoutMs ?? 240_000,
					);
			},
		);
	}

	/** Until `/healthz/readiness` answers 200 (database migrated, server up) and the REST API responds. */
	private async waitReady(timeoutMs: number): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		const proc = this.proc!;
		for (;;) {
			if (proc.hasExited()) {
				throw new Error(
					`${this.name} exited during start-up (log: ${this.logFile}):\n${proc.tail(40)}`,
				);
			}
			try {
				const health = await fetch(`${this.url}/healthz/readiness`, {
					signal: AbortSignal.timeout(2000),
				});
				if (health.ok) {
					const settings = await fetch(`${this.url}/rest/settings`, {
						signal: AbortSignal.timeout(5000),
					});
					if (settings.ok) return;
				}
			} catch {
				/* not listening yet */
			}
			if (Date.now() > deadline) {
				throw new Error(
					`${this.name} not ready after ${timeoutMs} ms (log: ${this.logFile}):\n${proc.tail(40)}`,
				);
			}
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
	}

	/** SIGTERM (n8n shuts down gracefully, finishing running executions), SIGKILL after `graceMs`. */
	async stop(graceMs = 30_000): Promise<void> {
		if (!this.proc || this.proc.hasExited()) return;
		const proc = this.proc;
		await step(`stop ${this.name}`, async () => {
			const info = await proc.stop(graceMs);
			log(`${this.name} exited (code ${info.code}, signal ${info.signal})`);
		});
	}

	async restart(): Promise<void> {
		await this.stop();
		await this.start();
	}

	/** Whether the process is running now (started and not exited). */
	get running(): boolean {
		return this.proc !== undefined && !this.proc.hasExited();
	}

	/**
	 * Lines of the process as it runs now, since its newest start: the log file spans restarts,
	 * and what an earlier run of the process left unfinished ended with it.
	 */
	logLinesSinceStart(re?: RegExp): string[] {
		const lines = this.logLines();
		let start = 0;
		for (let i = 0; i < lines.length; i++)
			if (/^===== \S+ n8n \S+ \(start #\d+\)$/.test(lines[i])) start = i;
		const current = lines.slice(start);
		return re ? current.filter((l) => re.test(l)) : current;
	}

	/** Lines of n8n's own log matching a pattern (for assertions and diagnostics). */
	logLines(re?: RegExp): string[] {
		if (!fs.existsSync(this.logFile)) return [];
		const lines = fs.readFileSync(this.logFile, 'utf8').split('\n');
		return re ? lines.filter((l) => re.test(l)) : lines;
	}
}
