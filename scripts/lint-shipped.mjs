// `n8n-node lint` (n8n's default eslint config, strict mode) on the code that is shipped.
//
// `n8n-node lint` runs `eslint .` in the current folder with the default eslint.config.mjs, which
// applies n8n's community-node rules (no setTimeout/process, no Node imports...) to every .ts file.
// Those rules are for node code; the sandbox, scripts, benchmark and tests are tooling and have
// their own config (eslint.tooling.config.mjs). Strict mode forbids changing eslint.config.mjs, so
// this script runs `n8n-node lint` unchanged in a staging folder that holds only what the package
// is built from: package.json, eslint.config.mjs, tsconfig.json, nodes/, credentials/ (the same
// set n8n's scanner lints in a source checkout), with node_modules linked. Paths in the output
// are rewritten to this repository. Extra arguments (e.g. --fix) are passed on; with --fix the
// fixed files are copied back.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHIPPED = ['package.json', 'eslint.config.mjs', 'tsconfig.json', 'nodes', 'credentials'];
const args = process.argv.slice(2);

const stage = mkdtempSync(join(tmpdir(), 'lp-lint-'));
let status = 1;
try {
	for (const entry of SHIPPED) cpSync(join(root, entry), join(stage, entry), { recursive: true });
	symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
	const run = spawnSync(join(root, 'node_modules/.bin/n8n-node'), ['lint', ...args], {
		cwd: stage,
		encoding: 'utf8',
		env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
	});
	// n8n-node forces colour on eslint; drop it when the output is not a terminal (CI logs)
	const plain = (text) => (process.stdout.isTTY ? text : stripVTControlCharacters(text));
	const fix = (text) => plain((text ?? '').replaceAll(stage, root));
	process.stdout.write(fix(run.stdout));
	process.stderr.write(fix(run.stderr));
	if (run.error) throw run.error;
	status = run.status ?? 1;
	if (args.includes('--fix')) {
		for (const entry of ['nodes', 'credentials'])
			cpSync(join(stage, entry), join(root, entry), { recursive: true });
	}
	console.log(
		status === 0
			? 'n8n-node lint (shipped code): clean'
			: `n8n-node lint (shipped code): failed (exit ${status})`,
	);
} finally {
	rmSync(stage, { recursive: true, force: true });
}
process.exitCode = status;
