// Installs Node 24 and the pinned n8n into the cache folder (outside the repository), once.
// A marker file is written only after a complete install (n8n + sqlite3 rebuilt for Node 24), so
// an interrupted install is resumed on the next run. Two harnesses (or a manual install) never
// install into the same folder at once: a lock file (`.install.lock`, holding the pid; a lock whose
// holder is gone is taken over) makes the later one wait.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatMs, log, step } from './log';
import {
	N8N_VERSION,
	NODE_MAJOR,
	SQLITE3_VERSION,
	installRecipe,
	n8nPaths,
	type N8nPaths,
} from './paths';
import { cleanNpmEnv, run } from './processes';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Environment for npm commands that must build native modules against Node 24's headers. */
export function node24Env(paths: N8nPaths = n8nPaths()): NodeJS.ProcessEnv {
	return cleanNpmEnv({
		PATH: `${path.dirname(paths.node24Bin)}${path.delimiter}${process.env.PATH ?? ''}`,
		// The machine's npm config points `nodedir` at Node 20's headers.
		npm_config_nodedir: paths.node24PackageDir,
	});
}

/** Node 24 from the npm registry (`node-<platform>-<arch>@24`: the binary and its headers). */
export async function ensureNode24(paths: N8nPaths = n8nPaths()): Promise<string> {
	if (fs.existsSync(paths.node24Marker) && fs.existsSync(paths.node24Bin)) return paths.node24Bin;
	const version = await nodeVersion(paths.node24Bin);
	if (
		version?.startsWith(`v${NODE_MAJOR}.`) &&
		fs.existsSync(path.join(paths.node24PackageDir, 'include', 'node', 'node.h'))
	) {
		fs.writeFileSync(paths.node24Marker, `${version}\n`);
		return paths.node24Bin;
	}
	await step(`install Node ${NODE_MAJOR} into ${paths.node24Dir}`, async () => {
		const packageName = `node-${process.platform}-${process.arch}`;
		fs.mkdirSync(paths.node24Dir, { recursive: true });
		const manifest = path.join(paths.node24Dir, 'package.json');
		if (!fs.existsSync(manifest))
			fs.writeFileSync(
				manifest,
				JSON.stringify({ name: `node${NODE_MAJOR}`, private: true }) + '\n',
			);
		const result = await run(
			'npm',
			['install', `${packageName}@^${NODE_MAJOR}`, '--no-audit', '--no-fund'],
			{
				cwd: paths.node24Dir,
				env: cleanNpmEnv(),
				logFile: path.join(paths.node24Dir, 'install.log'),
			},
		);
		if (result.code !== 0)
			throw new Error(
				`npm install ${packageName}@${NODE_MAJOR} failed (see ${paths.node24Dir}/install.log)\n${result.stderr.slice(-2000)}`,
			);
	});
	const installed = await nodeVersion(paths.node24Bin);
	if (!installed?.startsWith(`v${NODE_MAJOR}.`))
		throw new Error(`Node ${NODE_MAJOR} not usable at ${paths.node24Bin} (got ${installed})`);
	fs.writeFileSync(paths.node24Marker, `${installed}\n`);
	log(`Node ${installed} ready`);
	return paths.node24Bin;
}

async function nodeVersion(bin: string): Promise<string | undefined> {
	if (!fs.existsSync(bin)) return undefined;
	const result = await run(bin, ['--version'], { name: 'node --version' });
	return result.code === 0 ? result.stdout.trim() : undefined;
}

function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

function countPackages(nodeModules: string): number {
	try {
		return fs.readdirSync(nodeModules).length;
	} catch {
		return 0;
	}
}

/** Waits while another process installs into the folder; logs progress. */
async function waitForForeignInstall(paths: N8nPaths, lockFile: string): Promise<void> {
	const t0 = Date.now();
	let lastLog = 0;
	for (;;) {
		let lockPid: number | undefined;
		try {
			lockPid = Number(fs.readFileSync(lockFile, 'utf8').trim()) || undefined;
		} catch {
			lockPid = undefined;
		}
		const lockHeld = lockPid !== undefined && lockPid !== process.pid && pidAlive(lockPid);
		if (!lockHeld) return;
		if (Date.now() - lastLog > 20_000) {
			lastLog = Date.now();
			log(
				`another install into ${paths.n8nDir} is running (harness pid ${lockPid}); ` +
					`waiting ${formatMs(Date.now() - t0)} so far, ${countPackages(path.join(paths.n8nDir, 'node_modules'))} packages present`,
			);
		}
		await sleep(3000);
	}
}

/** Runs an npm command in the n8n folder with a progress heartbeat; appends `done <code>` to install.log. */
async function npmWithProgress(
	paths: N8nPaths,
	args: string[],
	what: string,
	env: NodeJS.ProcessEnv,
): Promise<void> {
	const logFile = path.join(paths.n8nDir, 'install.log');
	fs.appendFileSync(logFile, `\n=== ${new Date().toISOString()} npm ${args.join(' ')}\n`);
	const t0 = Date.now();
	const heartbeat = setInterval(() => {
		log(
			`  ${what}: ${formatMs(Date.now() - t0)}, ${countPackages(path.join(paths.n8nDir, 'node_modules'))} packages in node_modules`,
		);
	}, 20_000);
	try {
		const result = await run('npm', args, {
			cwd: paths.n8nDir,
			env,
			logFile,
			name: `npm ${args[0]}`,
		});
		fs.appendFileSync(logFile, `done ${result.code}\n`);
		if (result.code !== 0) {
			throw new Error(
				`npm ${args.join(' ')} failed with code ${result.code} (log: ${logFile})\n${result.stderr.split('\n').slice(-25).join('\n')}`,
			);
		}
	} finally {
		clearInterval(heartbeat);
	}
}

/**
 * Node 24 + n8n (pinned) + sqlite3 rebuilt for Node 24, in the cache. Returns the paths.
 * First run: about 5 minutes (the npm install, with sqlite3 compiling alongside); later: instant.
 */
export async function ensureN8nInstalled(): Promise<N8nPaths> {
	const paths = n8nPaths();
	if (
		fs.existsSync(paths.n8nMarker) &&
		fs.existsSync(paths.n8nBin) &&
		fs.existsSync(paths.node24Marker) &&
		fs.existsSync(paths.node24Bin)
	) {
		return paths;
	}
	log(`n8n ${N8N_VERSION} cache: ${paths.cache} (set LP_CACHE_DIR to move it)`);
	await ensureNode24(paths);
	if (fs.existsSync(paths.n8nMarker) && fs.existsSync(paths.n8nBin)) return paths;

	fs.mkdirSync(paths.n8nDir, { recursive: true });
	const lockFile = path.join(paths.n8nDir, '.install.lock');
	await waitForForeignInstall(paths, lockFile);
	if (fs.existsSync(paths.n8nMarker) && fs.existsSync(paths.n8nBin)) return paths;

	// Take the lock (a stale one, whose holder is gone, is replaced).
	for (;;) {
		try {
			fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
			break;
		} catch {
			const holder = Number(fs.readFileSync(lockFile, 'utf8').trim());
			if (holder && holder !== process.pid && pidAlive(holder)) {
				await waitForForeignInstall(paths, lockFile);
				if (fs.existsSync(paths.n8nMarker)) return paths;
			} else {
				fs.rmSync(lockFile, { force: true });
			}
		}
	}
	try {
		const env = node24Env(paths);
		const recipe = installRecipe(N8N_VERSION);
		const manifest = path.join(paths.n8nDir, 'package.json');
		if (!fs.existsSync(manifest))
			fs.writeFileSync(
				manifest,
				JSON.stringify({
					name: 'n8n-host',
					private: true,
					...(recipe.overrides ? { overrides: recipe.overrides } : {}),
				}) + '\n',
			);
		const logText = fs.existsSync(path.join(paths.n8nDir, 'install.log'))
			? fs.readFileSync(path.join(paths.n8nDir, 'install.log'), 'utf8')
			: '';
		const installedBefore =
			/(^|\n)done 0\s*$/.test(logText.trimEnd() + '\n') && fs.existsSync(paths.n8nBin);
		// sqlite3 compiles from source for about 2 minutes (its prebuilt binaries are on GitHub,
		// out of reach here). It is an N-API module, so it is built in its own folder while npm
		// installs n8n, and its binary is copied in afterwards.
		const sqlitePrebuild = installedBefore ? undefined : prebuildSqlite(paths, env);
		if (installedBefore) {
			log(
				`n8n ${N8N_VERSION} already installed by an earlier run (install.log ends with "done 0"); checking the native modules`,
			);
		} else {
			await step(`install n8n ${N8N_VERSION} (npm, about 4 min on a fresh machine)`, () =>
				// Optional native builds of some dependencies download from the internet and fail:
				// scripts are skipped and the one native module n8n needs is rebuilt below.
				npmWithProgress(
					paths,
					['install', `n8n@${N8N_VERSION}`, '--ignore-scripts', '--no-audit', '--no-fund'],
					'installing n8n',
					env,
				),
			);
		}
		// Each check starts Node 24, so a result is kept until something changes the binary.
		let sqliteOk = await sqliteLoads(paths);
		if (!sqliteOk) {
			const prebuilt = await sqlitePrebuild;
			sqliteOk = Boolean(
				prebuilt && installPrebuiltSqlite(paths, prebuilt) && (await sqliteLoads(paths)),
			);
			if (sqliteOk) log(`sqlite3 ${SQLITE3_VERSION}: using the binary built alongside the install`);
		}
		if (!sqliteOk) {
			await step('rebuild sqlite3 for Node 24 (1-2 min)', () =>
				npmWithProgress(
					paths,
					['rebuild', 'sqlite3', '--foreground-scripts'],
					'building sqlite3',
					env,
				),
			);
			if (!(await sqliteLoads(paths)))
				throw new Error(
					`sqlite3 still does not load under Node ${NODE_MAJOR} after the rebuild (see ${paths.n8nDir}/install.log)`,
				);
		}
		for (const module of recipe.rebuild) {
			await step(`build ${module} for Node ${NODE_MAJOR}`, () =>
				npmWithProgress(
					paths,
					['rebuild', module, '--foreground-scripts'],
					`building ${module}`,
					env,
				),
			);
		}
		fs.writeFileSync(
			paths.n8nMarker,
			JSON.stringify({ n8n: N8N_VERSION, installedAt: new Date().toISOString() }) + '\n',
		);
		log(`n8n ${N8N_VERSION} ready in ${paths.n8nDir}`);
	} finally {
		fs.rmSync(lockFile, { force: true });
	}
	return paths;
}

/**
 * Builds sqlite3 SQLITE3_VERSION for Node 24 in `<cache>/sqlite3-<version>` (once) and returns the
 * path of its binary; undefined when that fails (the caller then rebuilds inside n8n's folder).
 */
async function prebuildSqlite(
	paths: N8nPaths,
	env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
	const dir = path.join(paths.cache, `sqlite3-${SQLITE3_VERSION}`);
	const binary = path.join(dir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
	const marker = path.join(dir, '.built');
	if (fs.existsSync(marker) && fs.existsSync(binary)) return binary;
	try {
		return await step(
			`build sqlite3 ${SQLITE3_VERSION} for Node ${NODE_MAJOR} alongside the install (about 2 min)`,
			async () => {
				fs.mkdirSync(dir, { recursive: true });
				fs.writeFileSync(
					path.join(dir, 'package.json'),
					JSON.stringify({ name: 'sqlite3-build', private: true }) + '\n',
				);
				const logFile = path.join(dir, 'build.log');
				for (const args of [
					['install', `sqlite3@${SQLITE3_VERSION}`, '--ignore-scripts', '--no-audit', '--no-fund'],
					['rebuild', 'sqlite3', '--foreground-scripts'],
				]) {
					const result = await run('npm', args, {
						cwd: dir,
						env,
						logFile,
						name: `npm ${args[0]} (sqlite3)`,
					});
					if (result.code !== 0)
						throw new Error(
							`npm ${args.join(' ')} failed with code ${result.code} (log: ${logFile})`,
						);
				}
				if (!fs.existsSync(binary)) throw new Error(`${binary} was not built (log: ${logFile})`);
				fs.writeFileSync(marker, `${new Date().toISOString()}\n`);
				return binary;
			},
		);
	} catch (error) {
		log(
			`sqlite3 build alongside the install failed (${(error as Error).message}); it will be rebuilt in n8n's folder`,
		);
		return undefined;
	}
}

/** Copies the prebuilt binary into n8n's sqlite3 when that is the same sqlite3 version. */
function installPrebuiltSqlite(paths: N8nPaths, binary: string): boolean {
	const sqlite = path.join(paths.n8nDir, 'node_modules', 'sqlite3');
	try {
		const { version } = JSON.parse(fs.readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as {
			version?: string;
		};
		if (version !== SQLITE3_VERSION) {
			log(`n8n brought sqlite3 ${String(version)}, not ${SQLITE3_VERSION}: rebuilding it in place`);
			return false;
		}
		const target = path.join(sqlite, 'build', 'Release');
		fs.mkdirSync(target, { recursive: true });
		fs.copyFileSync(binary, path.join(target, 'node_sqlite3.node'));
		return true;
	} catch (error) {
		log(`could not use the prebuilt sqlite3 (${(error as Error).message})`);
		return false;
	}
}

/** sqlite3's native binding loads under Node 24 (it is built by `npm rebuild`, not by the install). */
async function sqliteLoads(paths: N8nPaths): Promise<boolean> {
	const sqlite = path.join(paths.n8nDir, 'node_modules', 'sqlite3');
	if (!fs.existsSync(sqlite))
		throw new Error(`${sqlite} is missing: the n8n install is incomplete`);
	const result = await run(
		paths.node24Bin,
		[
			'-e',
			`const s=require(${JSON.stringify(sqlite)}); new s.Database(':memory:').close(); console.log('ok')`,
		],
		{
			name: 'sqlite3 check',
		},
	);
	return result.code === 0 && result.stdout.includes('ok');
}
