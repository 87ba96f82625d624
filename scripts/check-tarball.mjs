// The release checklist on the packed package, the parts n8n's scanner does not cover:
//
//   node scripts/check-tarball.mjs x.tgz     a tarball (unpacked into a temporary folder)
//   node scripts/check-tarball.mjs dir       an unpacked package folder (test/unit/checkTarball.test.ts)
//
// `npm run scan:tarball` (scripts/scan-package.mjs --tarball) builds, packs once and runs both the
// scanner and this check on the same tarball. Exits 1 with the list of problems, if any:
//
// - files: only what a user needs: package.json, README.md, LICENSE(.md), CHANGELOG.md, and under
//   dist/nodes and dist/credentials the compiled .js, the codex .node.json and .svg/.png icons.
//   No source maps (the sources are not shipped, and the build makes none), no .d.ts (n8n loads
//   the .js only), no .ts, no tests, nothing else (sandbox, scripts, docs, demo...).
// - package.json: name n8n-nodes-* (or @scope/n8n-nodes-*), keyword n8n-community-node-package,
//   license MIT with the MIT text shipped, no runtime dependencies of any kind, n8n-workflow
//   among peerDependencies, the version the CHANGELOG's newest heading.
// - n8n field: every node and credential it lists is in the tarball and loads; each node has its
//   codex (<Node>.node.json, naming `<package>.<node name>`) and every `file:` icon of the nodes
//   and credentials is there; documentation links into this repository's README name a heading.
// - README: the topics of n8n's starter README (Installation, Operations, Credentials,
//   Compatibility, Usage, Resources) and the licence, under our own headings (see README_TOPICS).
// - `n8n-node lint` in the unpacked package with n8n's default eslint.config.mjs (strict mode needs
//   it; it is not shipped). Its config lints package.json and .ts files and ignores dist/, so on a
//   tarball it checks package.json only; the shipped JS is linted by the scanner's rules.
import { execFileSync, spawnSync } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const TOP_LEVEL = new Set(['package.json', 'README.md', 'LICENSE', 'LICENSE.md', 'CHANGELOG.md']);
const SHIPPED = /^dist\/(nodes|credentials)\/.+\.(js|json|svg|png)$/;
const NOT_SHIPPED = [
	[/\.map$/, 'a source map'],
	[/\.d\.ts$/, 'a type declaration'],
	[/(^|\/)(__tests__|__mocks__|test|tests)\//, 'a test folder'],
	[/\.(test|spec)\.[cm]?js$/, 'a test'],
];

/** n8n's starter README topic -> headings (or, for compatibility, a line) that cover it here. */
const README_TOPICS = [
	['Installation', /^#{2,3} .*install/im],
	['Operations', /^#{2,3} .*(operations|what the nodes do)/im],
	['Credentials', /^#{2,3} .*credential/im],
	['Compatibility', /^#{2,3} .*compatib|tested with n8n\s+\d/im],
	['Usage', /^#{2,3} .*(usage|recipes|examples|how to use)/im],
	['Resources', /^#{2,3} .*(resources|more|links|documentation)/im],
	['License', /^#{2,3} .*licen[cs]e/im],
];

function listFiles(dir, base = dir) {
	const out = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		if (entry.name === 'node_modules' && dir === base) continue;
		const path = join(dir, entry.name);
		if (entry.isDirectory()) out.push(...listFiles(path, base));
		else out.push(relative(base, path).split('\\').join('/'));
	}
	return out.sort();
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown) {
	const anchors = new Set();
	for (const [, text] of markdown.matchAll(/^#{1,6} (.+)$/gm))
		anchors.add(
			text
				.trim()
				.toLowerCase()
				.replace(/[^\p{L}\p{N} _-]/gu, '')
				.replace(/ /g, '-'),
		);
	return anchors;
}

function iconFiles(icon) {
	if (!icon) return [];
	const all = typeof icon === 'string' ? [icon] : Object.values(icon);
	return all.filter((i) => typeof i === 'string' && i.startsWith('file:')).map((i) => i.slice(5));
}

/** The exported class of a node or credential file, instantiated. */
function instanceOf(requireFrom, file) {
	const exported = requireFrom(file);
	const Class = Object.values(exported).find((value) => typeof value === 'function');
	if (!Class) throw new Error('exports no class');
	return new Class();
}

/**
 * Checks an unpacked package folder. Returns { problems, notes }: `problems` fail the check,
 * `notes` are the report's lines. The nodes are loaded (require) from `dir`: n8n-workflow must
 * resolve from there (scan-package links node_modules beside the unpacked folder).
 */
export function checkPackage(dir) {
	const problems = [];
	const notes = [];
	const files = listFiles(dir);
	const has = (path) => files.includes(path);
	const read = (path) => readFileSync(join(dir, path), 'utf8');

	// files
	const stray = [];
	for (const file of files) {
		const not = NOT_SHIPPED.find(([pattern]) => pattern.test(file));
		if (not) stray.push(`${file} (${not[1]})`);
		else if (!TOP_LEVEL.has(file) && !SHIPPED.test(file)) stray.push(file);
	}
	if (stray.length)
		problems.push(`files a user does not need are in the package:\n    ${stray.join('\n    ')}`);
	const bytes = files.reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
	notes.push(`${files.length} files, ${(bytes / 1000).toFixed(1)} kB unpacked`);

	// package.json
	if (!has('package.json')) return { problems: [...problems, 'no package.json'], notes };
	const pkg = JSON.parse(read('package.json'));
	if (!/^(@[^/]+\/)?n8n-nodes-/.test(pkg.name ?? ''))
		problems.push(`name ${pkg.name} does not start with n8n-nodes- (or @scope/n8n-nodes-)`);
	if (!(pkg.keywords ?? []).includes('n8n-community-node-package'))
		problems.push('keywords lack n8n-community-node-package');
	if (pkg.license !== 'MIT') problems.push(`license is ${pkg.license ?? 'not set'}, not MIT`);
	const license = ['LICENSE.md', 'LICENSE'].find(has);
	if (!license) problems.push('no LICENSE.md or LICENSE file');
	else if (
		!/MIT License/.test(read(license)) ||
		!/Permission is hereby granted/.test(read(license))
	)
		problems.push(`${license} is not the MIT licence text`);
	for (const field of [
		'dependencies',
		'optionalDependencies',
		'bundleDependencies',
		'bundledDependencies',
	]) {
		const value = pkg[field];
		const count = Array.isArray(value) ? value.length : Object.keys(value ?? {}).length;
		if (count)
			problems.push(
				`${field} is not empty (no runtime dependencies allowed): ${JSON.stringify(value)}`,
			);
	}
	if (!pkg.peerDependencies?.['n8n-workflow']) problems.push('peerDependencies lack n8n-workflow');
	if (!has('CHANGELOG.md')) problems.push('no CHANGELOG.md');
	else {
		const newest = read('CHANGELOG.md').match(/^## \[?v?(\d+\.\d+\.\d+[^\]\s]*)/m)?.[1];
		if (newest !== pkg.version)
			problems.push(
				`version ${pkg.version} is not the CHANGELOG's newest heading (${newest ?? 'none'})`,
			);
	}

	// README
	const readme = has('README.md') ? read('README.md') : '';
	if (!readme) problems.push('no README.md');
	const missingTopics = README_TOPICS.filter(([, pattern]) => !pattern.test(readme)).map(
		([t]) => t,
	);
	if (readme && missingTopics.length)
		problems.push(
			`README.md lacks these topics of n8n's starter README: ${missingTopics.join(', ')}`,
		);
	const anchors = anchorsOf(readme);
	const repo = (pkg.repository?.url ?? pkg.repository ?? '')
		.replace(/^git\+/, '')
		.replace(/\.git$/, '');
	// a link to the README (repo#anchor) or to a Markdown file of the repository
	// (repo/blob/<branch>/<path>#anchor, checked against this checkout)
	const checkDocLink = (what, url) => {
		if (typeof url !== 'string' || !repo || !url.startsWith(repo)) return;
		const [, path, anchor] =
			url.slice(repo.length).match(/^(?:\/blob\/[^/]+\/(.+?\.md))?#(.+)$/) ?? [];
		if (!anchor) return;
		if (!path) {
			if (anchor !== 'readme' && !anchors.has(anchor))
				problems.push(`${what}: ${url} names no heading of README.md`);
		} else if (!existsSync(join(root, path)))
			problems.push(`${what}: ${url} names ${path}, which this repository lacks`);
		else if (!anchorsOf(readFileSync(join(root, path), 'utf8')).has(anchor))
			problems.push(`${what}: ${url} names no heading of ${path}`);
	};

	// the n8n field: nodes, codex, icons, credentials
	const requireFrom = createRequire(join(dir, 'package.json'));
	const declared = { nodes: pkg.n8n?.nodes ?? [], credentials: pkg.n8n?.credentials ?? [] };
	if (!declared.nodes.length) problems.push('package.json n8n.nodes lists no node');
	for (const [kind, paths] of Object.entries(declared)) {
		for (const path of paths) {
			const file = posix.normalize(path);
			if (!has(file)) {
				problems.push(`n8n.${kind} lists ${path}, which is not in the package`);
				continue;
			}
			let instance;
			try {
				instance = instanceOf(requireFrom, join(dir, file));
			} catch (error) {
				problems.push(`${file} does not load: ${error.message.split('\n')[0]}`);
				continue;
			}
			const folder = posix.dirname(file);
			const description = kind === 'nodes' ? instance.description : instance;
			for (const icon of iconFiles(description?.icon)) {
				const iconPath = posix.join(folder, icon);
				if (!has(iconPath)) problems.push(`${file}: its icon ${iconPath} is not in the package`);
			}
			checkDocLink(file, description?.documentationUrl);
			if (kind !== 'nodes') continue;
			const codexPath = file.replace(/\.js$/, '.json');
			if (!has(codexPath)) {
				problems.push(`${file}: its codex ${codexPath} is not in the package`);
				continue;
			}
			const codex = JSON.parse(read(codexPath));
			if (codex.node !== `${pkg.name}.${description?.name}`)
				problems.push(
					`${codexPath}: "node" is ${codex.node}, not ${pkg.name}.${description?.name}`,
				);
			for (const docs of Object.values(codex.resources ?? {}))
				for (const { url } of docs ?? []) checkDocLink(codexPath, url);
		}
	}
	notes.push(
		`${declared.nodes.length} nodes, ${declared.credentials.length} credentials, codex and icons present`,
	);
	return { problems, notes };
}

/**
 * `n8n-node lint` in a copy of the unpacked package with n8n's default eslint.config.mjs and
 * node_modules linked. Returns { ok, output }.
 */
export function lintPacked(dir) {
	const stage = mkdtempSync(join(tmpdir(), 'lp-lint-packed-'));
	try {
		execFileSync('cp', ['-R', `${dir}/.`, stage]);
		const cli = join(root, 'node_modules/@n8n/node-cli');
		copyFileSync(
			join(cli, 'dist/template/templates/shared/default/eslint.config.mjs'),
			join(stage, 'eslint.config.mjs'),
		);
		if (!existsSync(join(stage, 'node_modules')))
			symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
		const run = spawnSync(join(root, 'node_modules/.bin/n8n-node'), ['lint'], {
			cwd: stage,
			encoding: 'utf8',
			env: { ...process.env, FORCE_COLOR: '0' },
		});
		const output = stripVTControlCharacters(`${run.stdout ?? ''}${run.stderr ?? ''}`)
			.replaceAll(stage + '/', '')
			.trim();
		return { ok: run.status === 0, output: run.error ? run.error.message : output };
	} finally {
		rmSync(stage, { recursive: true, force: true });
	}
}

/** Runs both on an unpacked package and prints the report; returns true when all passed. */
export function checkAndReport(dir, label) {
	const { problems, notes } = checkPackage(dir);
	const lint = lintPacked(dir);
	if (!lint.ok)
		problems.push(`n8n-node lint (package.json of the package) failed:\n${lint.output}`);
	if (problems.length === 0) {
		console.log(
			`check ${label}: passed: ${notes.join('; ')}; README topics, MIT, no runtime dependencies, ` +
				`CHANGELOG version, n8n-node lint (package.json) clean`,
		);
		return true;
	}
	console.log(`check ${label}: ${problems.length} problem(s)`);
	for (const problem of problems) console.log(`  - ${problem}`);
	return false;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
	const target = process.argv[2];
	if (!target) {
		console.error('usage: node scripts/check-tarball.mjs <package.tgz | unpacked folder>');
		process.exit(2);
	}
	const path = resolve(target);
	let ok;
	if (statSync(path).isDirectory()) ok = checkAndReport(path, relative(process.cwd(), path) || '.');
	else {
		const work = mkdtempSync(join(tmpdir(), 'lp-check-'));
		try {
			execFileSync('tar', ['-xzf', path, '-C', work]);
			symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
			const label = `${path.split('/').pop()} (${(statSync(path).size / 1000).toFixed(1)} kB)`;
			ok = checkAndReport(join(work, 'package'), label);
		} finally {
			rmSync(work, { recursive: true, force: true });
		}
	}
	process.exitCode = ok ? 0 : 1;
}
