// The real distribution path: `npm run build` + `npm pack` of this repository (the `files` list,
// `dist` and the `n8n` field of package.json are what gets exercised), then the
// tarball installed with npm into n8n's community-package folder (`<N8N_USER_FOLDER>/.n8n/nodes`).
//
// The pack runs in a staging copy of the working tree (node_modules symlinked), so a build that
// another developer starts in the repository at the same moment cannot empty `dist` under us.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log, step } from './log';
import { REPO_ROOT } from './paths';
import { cleanNpmEnv, runChecked } from './processes';

const SKIP = new Set([
	'node_modules',
	'.git',
	'dist',
	'test-results',
	'.sandbox-state',
	'coverage',
	'bench',
]);

function copyTree(from: string, to: string): void {
	fs.mkdirSync(to, { recursive: true });
	for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
		if (SKIP.has(entry.name) || entry.name.endsWith('.tgz')) continue;
		const source = path.join(from, entry.name);
		const target = path.join(to, entry.name);
		if (entry.isDirectory()) copyTree(source, target);
		else if (entry.isFile()) fs.copyFileSync(source, target);
		else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target);
	}
}

export interface PackedPackage {
	tarball: string;
	name: string;
	version: string;
	files: string[];
}

/** Builds (`npm run build`) and packs (`npm pack`) the package into `outDir`. */
export async function packPackage(
	options: { outDir?: string; repoRoot?: string } = {},
): Promise<PackedPackage> {
	const repoRoot = options.repoRoot ?? REPO_ROOT;
	const outDir = options.outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lp-pack-'));
	return step('build + npm pack', async () => {
		if (!fs.existsSync(path.join(repoRoot, 'node_modules')))
			throw new Error(`${repoRoot}/node_modules is missing: run \`npm ci\` first`);
		const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-stage-'));
		try {
			copyTree(repoRoot, staging);
			fs.symlinkSync(
				path.join(repoRoot, 'node_modules'),
				path.join(staging, 'node_modules'),
				'dir',
			);
			fs.mkdirSync(outDir, { recursive: true });
			// The repository's .npmrc sets ignore-scripts (a dev dependency's preinstall cannot run
			// under npm), so `npm pack` skips `prepack`: build explicitly first.
			await runChecked('npm', ['run', 'build'], {
				cwd: staging,
				name: 'npm run build',
				env: cleanNpmEnv(),
				timeoutMs: 300_000,
			});
			const { stdout } = await runChecked('npm', ['pack', '--json', '--pack-destination', outDir], {
				cwd: staging,
				name: 'npm pack',
				env: cleanNpmEnv(),
				timeoutMs: 300_000,
			});
			// The build's own output (gulp prints `[hh:mm:ss] ...`) precedes npm's JSON, which starts
			// with a line that is exactly `[`.
			const lines = stdout.split('\n');
			const jsonStart = lines.lastIndexOf('[');
			if (jsonStart < 0) throw new Error(`npm pack printed no JSON:\n${stdout.slice(-2000)}`);
			const info = JSON.parse(lines.slice(jsonStart).join('\n'))[0] as {
				filename: string;
				name: string;
				version: string;
				files: Array<{ path: string }>;
			};
			const tarball = path.join(outDir, info.filename.replace(/^@/, '').replace(/\//, '-'));
			if (!fs.existsSync(tarball)) throw new Error(`npm pack did not produce ${tarball}`);
			const files = info.files.map((f) => f.path);
			const manifest = JSON.parse(fs.readFileSync(path.join(staging, 'package.json'), 'utf8')) as {
				n8n?: { nodes?: string[]; credentials?: string[] };
			};
			const declared = [...(manifest.n8n?.nodes ?? []), ...(manifest.n8n?.credentials ?? [])];
			const missing = declared.filter((f) => !files.includes(f));
			if (missing.length)
				throw new Error(
					`the packed tarball lacks files its package.json "n8n" field declares: ${missing.join(', ')}`,
				);
			log(
				`packed ${path.basename(tarball)}: ${files.length} files (${files.filter((f) => f.endsWith('.node.js')).length} nodes)`,
			);
			return { tarball, name: info.name, version: info.version, files };
		} finally {
			if (process.env.LP_KEEP_STAGING !== '1') fs.rmSync(staging, { recursive: true, force: true });
		}
	});
}

/**
 * Installs the tarball into n8n's community-package folder the way n8n itself would: a
 * package.json naming the dependency, peer dependencies (n8n-workflow) left to n8n's own copy.
 */
export async function installTarball(tarball: string, nodesDir: string): Promise<void> {
	await step(`install ${path.basename(tarball)} into ${nodesDir}`, async () => {
		fs.mkdirSync(nodesDir, { recursive: true });
		const manifestPath = path.join(nodesDir, 'package.json');
		const manifest = fs.existsSync(manifestPath)
			? JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
			: { name: 'installed-nodes', private: true, dependencies: {} };
		// The tarball is copied next to package.json so that the folder stays valid after the
		// temporary pack folder is gone.
		const local = path.join(nodesDir, 'packages', path.basename(tarball));
		fs.mkdirSync(path.dirname(local), { recursive: true });
		for (const old of fs.readdirSync(path.dirname(local)))
			fs.rmSync(path.join(path.dirname(local), old), { force: true });
		fs.copyFileSync(tarball, local);
		const name = path.basename(tarball).replace(/-\d+\.\d+\.\d+.*\.tgz$/, '');
		manifest.dependencies = {
			...(manifest.dependencies ?? {}),
			[name]: `file:./packages/${path.basename(tarball)}`,
		};
		fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
		// Reinstalling the same version from a changed tarball: npm would keep the old copy.
		fs.rmSync(path.join(nodesDir, 'node_modules', name), { recursive: true, force: true });
		await runChecked(
			'npm',
			[
				'install',
				'--omit=dev',
				'--legacy-peer-deps',
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
				'--package-lock=false',
				'--bin-links=false',
			],
			{ cwd: nodesDir, name: 'npm install (nodes)', env: cleanNpmEnv(), timeoutMs: 300_000 },
		);
		const installed = path.join(nodesDir, 'node_modules', name, 'package.json');
		if (!fs.existsSync(installed)) throw new Error(`${installed} missing after npm install`);
	});
}

/** package.json inside a packed tarball (read with the `tar` CLI). */
async function tarballManifest(
	tarball: string,
): Promise<{ name: string; version: string; n8n?: { nodes?: string[]; credentials?: string[] } }> {
	const { stdout } = await runChecked('tar', ['-xzOf', tarball, 'package/package.json'], {
		name: 'tar',
	});
	return JSON.parse(stdout);
}

/** n8n type names a packed package declares: `dist/nodes/X/FooBar.node.js` -> `<name>.fooBar`. */
export async function declaredTypes(
	tarball: string,
): Promise<{ nodes: string[]; credentials: string[] }> {
	const manifest = await tarballManifest(tarball);
	const lowerFirst = (file: string) => {
		const base = path.basename(file).replace(/\.(node|credentials)\.js$/, '');
		return base.charAt(0).toLowerCase() + base.slice(1);
	};
	return {
		nodes: (manifest.n8n?.nodes ?? []).map((f) => `${manifest.name}.${lowerFirst(f)}`),
		credentials: (manifest.n8n?.credentials ?? []).map(lowerFirst),
	};
}

/** Every file that goes into the build or the tarball (sources, manifests, README, licence). */
function packInputs(repoRoot: string): string[] {
	const files: string[] = [];
	const walk = (dir: string) => {
		if (!fs.existsSync(dir)) return;
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) walk(full);
			else if (entry.isFile()) files.push(full);
		}
	};
	walk(path.join(repoRoot, 'credentials'));
	walk(path.join(repoRoot, 'nodes'));
	for (const name of fs.readdirSync(repoRoot)) {
		if (
			/^(package\.json|package-lock\.json|tsconfig\.json|\.npmignore|README.*|LICEN[CS]E.*)$/i.test(
				name,
			)
		)
			files.push(path.join(repoRoot, name));
	}
	files.push(path.join(repoRoot, 'scripts', 'write-version.mjs'));
	return files.filter((f) => fs.existsSync(f)).sort();
}

/** Content hash of the pack inputs: same hash, same tarball. */
export function packInputsHash(repoRoot: string = REPO_ROOT): string {
	const hash = createHash('sha256');
	for (const file of packInputs(repoRoot)) {
		hash.update(path.relative(repoRoot, file));
		hash.update('\0');
		hash.update(fs.readFileSync(file));
		hash.update('\0');
	}
	return hash.digest('hex').slice(0, 16);
}

/**
 * `packPackage`, reusing the tarball built from identical sources (content hash) in `cacheDir`:
 * the end-to-end files and later `npm run sandbox` starts skip the 15 s build when nothing changed.
 */
export async function packPackageCached(
	cacheDir: string,
	repoRoot: string = REPO_ROOT,
): Promise<PackedPackage> {
	const key = packInputsHash(repoRoot);
	const dir = path.join(cacheDir, key);
	const infoFile = path.join(dir, 'packed.json');
	if (fs.existsSync(infoFile)) {
		const info = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as PackedPackage;
		if (fs.existsSync(info.tarball)) {
			log(`reusing ${path.basename(info.tarball)} packed from identical sources (${key})`);
			return info;
		}
	}
	const packed = await packPackage({ outDir: dir, repoRoot });
	fs.writeFileSync(infoFile, JSON.stringify(packed, null, 2));
	// Keep the five newest packs.
	const entries = fs
		.readdirSync(cacheDir)
		.map((name) => ({ name, mtime: fs.statSync(path.join(cacheDir, name)).mtimeMs }))
		.sort((a, b) => b.mtime - a.mtime);
	for (const old of entries.slice(5))
		fs.rmSync(path.join(cacheDir, old.name), { recursive: true, force: true });
	return packed;
}
