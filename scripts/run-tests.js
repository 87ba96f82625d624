#!/usr/bin/env node
// The README's test command. First the release gates (`npm run lint`: n8n-node lint, the
// tooling lint, prettier, the type check, n8n's scanner on the source and on the packed
// tarball) and the build; then the jest projects (the sandbox's own tests, integration, then e2e in band), each run even
// when an earlier step failed so one run shows every problem. Prints one closing line
// `N passed, N failed` that CI reads (skipped tests, if any, on the line before): a failed gate counts as a failure, and a run that
// executed no test shows `0 passed` rather than a green summary.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { stripVTControlCharacters } = require('node:util');

const root = path.join(__dirname, '..');
const resultsDir = path.join(root, 'test-results');
fs.mkdirSync(resultsDir, { recursive: true });
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const extraArgs = process.argv.slice(2);

const versions = require('./n8n/versions.json');
const platformReadings = require('../test/trigger/readings.json').readings;
const readingFiles = 'test/trigger/(recovery|recoveryCost|webhookTrigger)\\.test\\.ts$';

// The whole e2e suite on the pinned n8n; on the other tested versions a named subset each (CI's
// time budget, `subsets` in versions.json): its e2e files (`tests`) and, of the one-n8n file
// (instance.test.ts), its suites. 1.x, the most different, runs the packed package loading and
// running, every action operation, the error wording, both triggers, the tools for AI agents and
// MCP, rotation, and a restart with another WEBHOOK_URL (1.x moves the subscription at start-up,
// 2.x does not); the next 2.x minor what changes between minors: loading, the triggers'
// lifecycle (publication) and n8n's AI pieces.
const subsetRun = (version) => {
	const { tests, suites } = versions.subsets[version];
	return {
		project: 'e2e',
		of: 'package',
		label: `e2e on n8n ${version} (${[...suites, ...tests.filter((t) => t !== 'instance')].join(', ')})`,
		output: `e2e-n8n-${version}`,
		args: ['--runInBand', '--testPathPattern', `test/e2e/(${tests.join('|')})\\.test\\.ts$`],
		env: { LP_N8N_VERSION: version, LP_E2E_SUITES: suites.join(',') },
	};
};
// `of`: whose tests they are. The sandbox's own tests prove the simulator, not the package, so
// they are counted apart (and both in the closing line).
const runs = [
	{
		project: 'sandbox',
		of: 'sandbox',
		label: "sandbox (the API simulator's own tests)",
		args: ['--maxWorkers=2'],
	},
	{ project: 'integration', of: 'package', label: 'integration', args: ['--maxWorkers=2'] },
	// the trigger's files again under each other reading of what the spec leaves open
	...Object.entries(platformReadings).map(([name, reading]) => ({
		project: 'integration',
		of: 'package',
		label: `trigger under the reading ${name}`,
		output: `integration-reading-${name}`,
		args: ['--maxWorkers=2', '--testPathPattern', readingFiles],
		env: { LP_SANDBOX_READING: JSON.stringify(reading) },
	})),
	{ project: 'e2e', of: 'package', label: `e2e on n8n ${versions.pinned}`, args: ['--runInBand'] },
	...versions.matrix.map(subsetRun),
];

const total = { passed: 0, failed: 0, skipped: 0 };

const byOwner = { package: { passed: 0, failed: 0 }, sandbox: { passed: 0, failed: 0 } };
let exitCode = 0;

// The n8n installs (about 4 minutes each on a fresh machine, mostly download and unpacking) run in
// the background while the gates and the integration suite use the CPU; the e2e set-up of each
// version waits for its install through the harness's install lock. Its output: test-results/installs.log.
const installLog = fs.openSync(path.join(resultsDir, 'installs.log'), 'w');
const installs = spawn(
	process.execPath,
	[
		'-e',
		`const { spawn, spawnSync } = require('node:child_process');
		for (const version of ${JSON.stringify([versions.pinned, ...versions.matrix])}) {
			const r = spawnSync('npx', ['tsx', 'scripts/n8n/cli.ts', 'install'], {
				stdio: 'inherit', env: { ...process.env, LP_N8N_VERSION: version },
			});
			console.log('[installs] n8n ' + version + ': exit ' + r.status);
		}`,
	],
	{ cwd: root, stdio: ['ignore', installLog, installLog] },
);
const stopInstalls = () => installs.exitCode === null && installs.kill('SIGTERM');
process.on('exit', stopInstalls);

// Named again just before the closing line, so that the tail of a long CI log says what failed.
const failures = [];
for (const gate of ['lint', 'build']) {
	// the lint gate's last step (scan:tarball) builds before it packs: no second build after it
	if (gate === 'build' && failures.length === 0) {
		console.log('[run-tests] build: done by the lint gate (scan:tarball builds, then packs)');
		continue;
	}
	const started = Date.now();
	const result = spawnSync('npm', ['run', gate], { cwd: root, stdio: 'inherit' });
	const seconds = Math.round((Date.now() - started) / 1000);
	if (result.status === 0) {
		console.log(`[run-tests] ${gate}: passed in ${seconds} s`);
	} else {
		console.log(`[run-tests] ${gate}: FAILED (exit ${result.status}) in ${seconds} s`);
		failures.push(`the ${gate} gate (exit ${result.status})`);
		total.failed++;
		exitCode = 1;
	}
}
for (const { project, of, label, output, args, env } of runs) {
	const outputFile = path.join(resultsDir, `${output ?? project}.json`);
	fs.rmSync(outputFile, { force: true });
	const started = Date.now();
	const result = spawnSync(
		process.execPath,
		[
			jest,
			'--selectProjects',
			project,
			'--json',
			`--outputFile=${outputFile}`,
			...args,
			...extraArgs,
		],
		{ cwd: root, stdio: 'inherit', env: { ...process.env, ...env } },
	);
	if (result.status !== 0) exitCode = 1;
	if (!fs.existsSync(outputFile)) {
		console.error(`[run-tests] ${label}: jest wrote no results (exit ${result.status})`);
		exitCode = 1;
		continue;
	}
	const report = JSON.parse(fs.readFileSync(outputFile, 'utf8'));
	const failedSuites = report.testResults.filter(
		(suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
	).length;
	for (const suite of report.testResults) {
		const suiteName = path.relative(root, suite.name);
		const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
		for (const test of failedTests) failures.push(`${label}: ${suiteName} › ${test.fullName}`);
		if (suite.status === 'failed' && failedTests.length === 0)
			failures.push(
				`${label}: ${suiteName} (the suite itself: ${
					stripVTControlCharacters(String(suite.message))
						.split('\n')
						.find((line) => line.trim()) ?? 'no message'
				})`,
			);
	}
	total.passed += report.numPassedTests;
	total.failed += report.numFailedTests + failedSuites;
	byOwner[of].passed += report.numPassedTests;
	byOwner[of].failed += report.numFailedTests + failedSuites;
	total.skipped += report.numPendingTests + report.numTodoTests;
	console.log(
		`[run-tests] ${label}: ${report.numPassedTests} passed, ${report.numFailedTests + failedSuites} failed in ${Math.round((Date.now() - started) / 1000)} s`,
	);
}

fs.writeFileSync(path.join(resultsDir, 'summary.json'), JSON.stringify(total));
if (total.passed === 0) exitCode = 1;
if (total.skipped > 0) console.log(`[run-tests] ${total.skipped} skipped`);
for (const failure of failures) console.log(`[run-tests] FAILED ${failure}`);
for (const [owner, counts] of Object.entries(byOwner))
	console.log(`[run-tests] the ${owner}'s tests: ${counts.passed} passed, ${counts.failed} failed`);
console.log(`${total.passed} passed, ${total.failed} failed`);
process.exit(exitCode);
