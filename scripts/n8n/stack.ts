// The whole set-up of one run, shared by `npm run sandbox` and the end-to-end suite:
// n8n installed (cached) + the package packed and installed as a community package + the sandbox
// API + the TLS front + one n8n main process with an owner and a public-API key.
//
// Queue mode adds processes to the same host: `stack.host.startProcess({command:
// 'worker', ...})` with a shared database passed through `n8nEnv`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_OWNER, type N8nClient, type OwnerAccount } from './client';
import { ensureN8nInstalled } from './install';
import { log, step } from './log';
import { N8nHost, type N8nProcess } from './n8n';
import { packPackageCached, type PackedPackage } from './pack';
import { cacheRoot, type N8nPaths } from './paths';
import { assertPortsFree, freePort } from './ports';
import { onCleanup, runNewestFirst } from './processes';
import { ensureQueueServices, postgresEnv, startPostgres, type PostgresServer } from './services';
import { startSandboxApi, type SandboxApi } from './sandbox-api';
import { makeCertificates, startTlsFront, type Certificates, type TlsFront } from './tls-front';

export interface StackPorts {
	n8n: number;
	broker: number;
	sandbox: number;
	front: number;
}

export interface StackOptions {
	/** Short name used in temp-folder and log names. */
	name: string;
	/** Folder for the n8n user folder, certificates, logs. Default: a new temp folder, removed on stop. */
	workDir?: string;
	/** Keep `workDir` on stop (always kept when LP_KEEP_WORKDIR=1). */
	keepWorkDir?: boolean;
	/** Fixed ports; any missing one is picked free. With fixed ports, a taken one fails clearly. */
	ports?: Partial<StackPorts>;
	/** Start the sandbox API (default true). */
	sandbox?: boolean;
	sandboxStateFile?: string;
	sandboxArgs?: string[];
	/** Reuse an encryption key (a persistent user folder needs the same key every time). */
	encryptionKey?: string;
	/** Extra environment of every n8n process. */
	n8nEnv?: Record<string, string>;
	/** Extra environment of the main process only (after `n8nEnv`). */
	mainEnv?: Record<string, string>;
	/** Interface n8n listens on (default 127.0.0.1). */
	listenAddress?: string;
	/** Interface the TLS front listens on (default 127.0.0.1). */
	frontHost?: string;
	owner?: OwnerAccount;
	/** Echo n8n's and the sandbox's output. */
	echo?: boolean;
	/** A tarball already packed (skip build + pack). */
	packed?: PackedPackage;
	/**
	 * n8n's database: SQLite in the user folder (default), or a throwaway PostgreSQL for stacks
	 * where several n8n processes (CLI runs, workers) write at once.
	 */
	database?: 'sqlite' | 'postgres';
	/** n8n's clock can be moved while it runs (`stack.host.moveClock`): N8nHost.clockOffsetFile. */
	clockOffsetFile?: string;
}

export interface Stack {
	workDir: string;
	paths: N8nPaths;
	ports: StackPorts;
	packed: PackedPackage;
	certificates: Certificates;
	front: TlsFront;
	sandbox?: SandboxApi;
	/** With `database: 'postgres'`. */
	postgres?: PostgresServer;
	host: N8nHost;
	main: N8nProcess;
	client: N8nClient;
	owner: OwnerAccount;
	/** `https://127.0.0.1:<front>/` */
	webhookBaseUrl: string;
	stop(): Promise<void>;
}

/**
 * Whether work folders (logs, screenshots) are kept after `stop`: asked for (LP_KEEP_WORKDIR=1),
 * or a test or hook of the e2e file running this failed (test/e2e/environment.ts).
 */
export const keepWorkFolders = (): boolean =>
	process.env.LP_KEEP_WORKDIR === '1' ||
	(globalThis as { lpTestFailed?: boolean }).lpTestFailed === true;

export async function startStack(options: StackOptions): Promise<Stack> {
	const t0 = Date.now();
	const workDir = options.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `lp-${options.name}-`));
	fs.mkdirSync(workDir, { recursive: true });
	const keep = options.keepWorkDir === true;
	const logDir = path.join(workDir, 'logs');
	log(`${options.name}: work folder ${workDir} (logs in ${logDir})`);

	const stoppers: Array<{ name: string; fn: () => Promise<void> }> = [];
	let stopped = false;
	let failed = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		await step(`${options.name}: shut down`, () => runNewestFirst(stoppers, 'stopping'));
		if (!keep && !failed && !options.workDir && !keepWorkFolders())
			fs.rmSync(workDir, { recursive: true, force: true });
		else log(`kept ${workDir}`);
	};
	const unregister = onCleanup(`${options.name} stack`, stop);

	try {
		const ports: StackPorts = {
			n8n: options.ports?.n8n ?? (await freePort()),
			broker: options.ports?.broker ?? (await freePort()),
			sandbox: options.ports?.sandbox ?? (await freePort()),
			front: options.ports?.front ?? (await freePort()),
		};
		await assertPortsFree([
			{ port: ports.n8n, what: 'n8n editor and API', flag: '--n8n-port', env: 'N8N_PORT' },
			{
				port: ports.broker,
				what: "n8n's task broker",
				flag: '--broker-port',
				env: 'LP_BROKER_PORT',
			},
			...(options.sandbox === false
				? []
				: [
						{
							port: ports.sandbox,
							what: 'sandbox learning-platform API',
							flag: '--api-port',
							env: 'LP_API_PORT',
						},
					]),
			{
				port: ports.front,
				what: 'TLS front (https webhooks)',
				flag: '--tls-port',
				env: 'LP_TLS_PORT',
			},
		]);

		// The n8n install (network-bound) and the build (CPU-bound) overlap on a fresh machine.
		const [paths, packed] = await Promise.all([
			step('ensure n8n installed', () => ensureN8nInstalled()),
			options.packed
				? Promise.resolve(options.packed)
				: packPackageCached(path.join(cacheRoot(), 'packs')),
		]);

		const certificates = await step('make TLS certificates (openssl)', () =>
			makeCertificates(path.join(workDir, 'tls')),
		);

		const front = await startTlsFront({
			port: ports.front,
			targetPort: ports.n8n,
			certificates,
			host: options.frontHost,
		});
		stoppers.push({ name: 'TLS front', fn: () => front.close() });

		let sandbox: SandboxApi | undefined;
		if (options.sandbox !== false) {
			sandbox = await startSandboxApi({
				port: ports.sandbox,
				stateFile: options.sandboxStateFile,
				trustCaFile: certificates.caCertFile,
				logFile: path.join(logDir, 'sandbox-api.log'),
				extraArgs: options.sandboxArgs,
				echo: options.echo,
			});
			stoppers.push({ name: 'sandbox API', fn: () => sandbox!.stop() });
		}

		let postgres: PostgresServer | undefined;
		let databaseEnv: Record<string, string> = {};
		if (options.database === 'postgres') {
			const { pgBin } = await step('ensure PostgreSQL (Debian package)', () =>
				ensureQueueServices(),
			);
			// Its folder belongs to the `postgres` user: outside the work folder, removed on stop.
			const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), `lp-${options.name}-pg-`));
			fs.chmodSync(pgDir, 0o755);
			postgres = await startPostgres({
				pgBin,
				baseDir: path.join(pgDir, 'pg'),
				logFile: path.join(logDir, 'postgres.log'),
				echo: options.echo,
			});
			stoppers.push({
				name: 'PostgreSQL',
				fn: async () => {
					await postgres!.stop();
					fs.rmSync(pgDir, { recursive: true, force: true });
				},
			});
			databaseEnv = postgresEnv(postgres);
		}

		const webhookBaseUrl = `${front.url}/`;
		const host = new N8nHost({
			userFolder: path.join(workDir, 'n8n'),
			encryptionKey: options.encryptionKey,
			webhookUrl: webhookBaseUrl,
			env: { ...databaseEnv, ...(options.n8nEnv ?? {}) },
			logDir,
			listenAddress: options.listenAddress,
			paths,
		});
		host.clockOffsetFile = options.clockOffsetFile;
		await host.installCommunityPackage(packed.tarball);

		const main = await host.startProcess({
			port: ports.n8n,
			brokerPort: ports.broker,
			name: 'n8n-main',
			echo: options.echo,
			env: options.mainEnv,
		});
		stoppers.push({
			name: 'n8n processes',
			fn: async () => void (await Promise.all(host.processes.map((p) => p.stop()))),
		});

		const owner = options.owner ?? DEFAULT_OWNER;
		await step('owner account + public API key', () => main.client.setupOwnerAndApiKey(owner));

		log(`${options.name}: stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
		return {
			workDir,
			paths,
			ports,
			packed,
			certificates,
			front,
			sandbox,
			postgres,
			host,
			main,
			client: main.client,
			owner,
			webhookBaseUrl,
			stop: async () => {
				unregister();
				await stop();
			},
		};
	} catch (error) {
		failed = true;
		unregister();
		await stop();
		throw error;
	}
}
