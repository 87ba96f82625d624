/**
 * scripts/check-tarball.mjs (the release checklist on the packed package) on small fake packages:
 * a clean one passes, and one with the faults it exists to catch lists each of them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const checker = join(__dirname, '../../scripts/check-tarball.mjs');
const REPO = 'https://github.com/example/n8n-nodes-fake';

const README = `# n8n-nodes-fake

## Installation

Tested with n8n 2.40.

## Operations

## Credentials

## Usage

## Resources

## License
`;

function fakePackage(): string {
	const dir = mkdtempSync(join(tmpdir(), 'lp-fake-package-'));
	const files: Record<string, string> = {
		'package.json': JSON.stringify({
			name: 'n8n-nodes-fake',
			version: '1.2.0',
			license: 'MIT',
			keywords: ['n8n-community-node-package'],
			repository: { type: 'git', url: `git+${REPO}.git` },
			n8n: {
				nodes: ['dist/nodes/Fake/Fake.node.js'],
				credentials: ['dist/credentials/FakeApi.credentials.js'],
			},
			peerDependencies: { 'n8n-workflow': '*' },
		}),
		'README.md': README,
		'LICENSE.md': 'MIT License\n\nPermission is hereby granted, free of charge, ...\n',
		'CHANGELOG.md': '# Changelog\n\n## 1.2.0 (2026-11-27)\n\n## 1.1.0\n',
		'dist/nodes/Fake/Fake.node.js': `exports.Fake = class Fake {
	constructor() {
		this.description = { name: 'fake', icon: 'file:fake.svg', documentationUrl: '${REPO}#operations' };
	}
};`,
		'dist/nodes/Fake/Fake.node.json': JSON.stringify({
			node: 'n8n-nodes-fake.fake',
			resources: { primaryDocumentation: [{ url: `${REPO}#usage` }] },
		}),
		'dist/nodes/Fake/fake.svg': '<svg/>',
		'dist/credentials/FakeApi.credentials.js': `exports.FakeApi = class FakeApi {
	constructor() { this.name = 'fakeApi'; this.icon = { light: 'file:fake.svg', dark: 'file:fake.dark.svg' }; }
};`,
		'dist/credentials/fake.svg': '<svg/>',
		'dist/credentials/fake.dark.svg': '<svg/>',
	};
	for (const [path, text] of Object.entries(files)) write(dir, path, text);
	return dir;
}

function write(dir: string, path: string, text: string) {
	mkdirSync(dirname(join(dir, path)), { recursive: true });
	writeFileSync(join(dir, path), text);
}

/** `checkPackage(dir)` of the checker, run by node (the checker is an ES module). */
function check(dir: string): { problems: string[]; notes: string[] } {
	const run = spawnSync(
		process.execPath,
		[
			'--input-type=module',
			'-e',
			`import { checkPackage } from ${JSON.stringify(checker)};
			console.log(JSON.stringify(checkPackage(${JSON.stringify(dir)})));`,
		],
		{ encoding: 'utf8' },
	);
	if (run.status !== 0) throw new Error(run.stderr);
	return JSON.parse(run.stdout);
}

const made: string[] = [];
afterAll(() => {
	for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

test('a package with only what a user needs passes', () => {
	const dir = fakePackage();
	made.push(dir);
	const { problems, notes } = check(dir);
	expect(problems).toEqual([]);
	expect(notes[0]).toMatch(/^10 files, /);
});

test('stray files, a runtime dependency, a missing codex, icon or keyword, a stale CHANGELOG are each listed', () => {
	const dir = fakePackage();
	made.push(dir);
	write(dir, 'dist/nodes/Fake/Fake.node.js.map', '{}');
	write(dir, 'dist/nodes/Fake/Fake.node.d.ts', '');
	write(dir, 'dist/nodes/Fake/Fake.node.test.js', '');
	write(dir, 'sandbox/server.js', '');
	write(dir, 'docs/nodes.md', '');
	unlinkSync(join(dir, 'dist/nodes/Fake/Fake.node.json'));
	unlinkSync(join(dir, 'dist/credentials/fake.dark.svg'));
	write(dir, 'CHANGELOG.md', '# Changelog\n\n## 1.1.0\n');
	write(dir, 'README.md', README.replace('## Usage\n', '').replace('Tested with n8n 2.40.', ''));
	write(
		dir,
		'package.json',
		JSON.stringify({
			name: 'fake-nodes',
			version: '1.2.0',
			license: 'ISC',
			keywords: ['n8n'],
			repository: { type: 'git', url: `git+${REPO}.git` },
			n8n: {
				nodes: ['dist/nodes/Fake/Fake.node.js', 'dist/nodes/Gone/Gone.node.js'],
				credentials: ['dist/credentials/FakeApi.credentials.js'],
			},
			dependencies: { axios: '^1.0.0' },
		}),
	);

	const { problems } = check(dir);
	const text = problems.join('\n');
	expect(problems[0]).toMatch(/^files a user does not need are in the package:/);
	for (const stray of [
		'dist/nodes/Fake/Fake.node.js.map (a source map)',
		'dist/nodes/Fake/Fake.node.d.ts (a type declaration)',
		'dist/nodes/Fake/Fake.node.test.js (a test)',
		'sandbox/server.js',
		'docs/nodes.md',
	])
		expect(problems[0]).toContain(`\n    ${stray}`);
	expect(text).toContain('name fake-nodes does not start with n8n-nodes-');
	expect(text).toContain('keywords lack n8n-community-node-package');
	expect(text).toContain('license is ISC, not MIT');
	expect(text).toContain('dependencies is not empty (no runtime dependencies allowed)');
	expect(text).toContain('peerDependencies lack n8n-workflow');
	expect(text).toContain("version 1.2.0 is not the CHANGELOG's newest heading (1.1.0)");
	expect(text).toContain(
		"README.md lacks these topics of n8n's starter README: Compatibility, Usage",
	);
	expect(text).toContain(
		'n8n.nodes lists dist/nodes/Gone/Gone.node.js, which is not in the package',
	);
	expect(text).toContain(
		'dist/nodes/Fake/Fake.node.js: its codex dist/nodes/Fake/Fake.node.json is not in the package',
	);
	expect(text).toContain(
		'dist/credentials/FakeApi.credentials.js: its icon dist/credentials/fake.dark.svg is not in the package',
	);
	expect(problems).toHaveLength(11);
});

test('a documentation link to a README heading that is not there is listed', () => {
	const dir = fakePackage();
	made.push(dir);
	write(dir, 'README.md', README.replace('## Operations', '## What it does'));
	const { problems } = check(dir);
	// the topic is gone too: "What it does" is not one of the headings the checker maps to Operations
	expect(problems).toEqual([
		"README.md lacks these topics of n8n's starter README: Operations",
		`dist/nodes/Fake/Fake.node.js: ${REPO}#operations names no heading of README.md`,
	]);
});
