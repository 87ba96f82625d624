// Runs the lint legs of n8n's community-package scanner (@n8n/scan-community-package, the check
// n8n runs before verifying a package) offline, through its own `analyzePackage(dir, patterns)`:
//
//   node scripts/scan-package.mjs                    the source: package.json, {nodes,credentials}/**
//   node scripts/scan-package.mjs --tarball          npm run build + npm pack, then the unpacked tarball
//   node scripts/scan-package.mjs --tarball x.tgz    an existing tarball, unpacked
//
// The scanner ignores eslint-disable comments (allowInlineConfig: false). Prints the findings and
// exits 1 on any. The provenance and registry legs of the real scan need the network and a
// published version; they are not run here. In --tarball mode the same unpacked tarball then goes
// through scripts/check-tarball.mjs (files, package.json, codex, icons, README, n8n-node lint).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const scannerDir = dirname(require.resolve('@n8n/scan-community-package/package.json'));
// The scanner makes a temporary folder when it loads; let its own `tmp` remove it on exit.
createRequire(join(scannerDir, 'package.json'))('tmp').setGracefulCleanup();
const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(
	join(scannerDir, 'scanner/scanner.mjs')
);
const { checkAndReport } = await import('./check-tarball.mjs');
const { version: scannerVersion } = require('@n8n/scan-community-package/package.json');

const args = process.argv.slice(2);
const tarballMode = args[0] === '--tarball';

async function scan(label, dir, patterns) {
	const result = await analyzePackage(dir, patterns);
	if (result.passed) {
		console.log(`scan ${label}: 0 findings (@n8n/scan-community-package ${scannerVersion})`);
		return true;
	}
	console.log(`scan ${label}: ${result.message}`);
	if (result.details) console.log(result.details.replaceAll(dir + '/', ''));
	return false;
}

let ok;
if (!tarballMode) {
	ok = await scan('source', root, SOURCE_FILE_PATTERNS);
} else {
	const work = mkdtempSync(join(tmpdir(), 'lp-scan-'));
	try {
		let tarball = args[1] ? resolve(args[1]) : undefined;
		if (!tarball) {
			// .npmrc sets ignore-scripts, so `npm pack` would not build: build first
			execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
			execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
				cwd: root,
				stdio: ['ignore', 'ignore', 'inherit'],
			});
			tarball = join(
				work,
				readdirSync(work).find((f) => f.endsWith('.tgz')),
			);
		}
		execFileSync('tar', ['-xzf', tarball, '-C', work]);
		const label = `tarball ${tarball.split('/').pop()} (${(statSync(tarball).size / 1000).toFixed(1)} kB)`;
		ok = await scan(label, join(work, 'package'));
		// beside the unpacked package (not in it): the check loads the nodes, which need n8n-workflow
		symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
		ok = checkAndReport(join(work, 'package'), label) && ok;
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}
process.exitCode = ok ? 0 : 1;
