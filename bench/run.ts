/**
 * `npm run bench`: how close the nodes get to the API's limits, measured against the
 * sandbox API on loopback. Prints a table (stdout), progress (stderr), and writes
 * bench/results/latest.json and bench/results/latest.md.
 *
 *   npm run bench                      all rows (about 10 to 14 minutes on 2 cores)
 *   npm run bench -- --quick           skips the slow parts: bulk writes at the real 60/min, the 30 s
 *                                      report, and the real n8n (trigger row in-process, no 2b, 4b-4d, 5b)
 *   npm run bench -- --only feed,reports
 *   npm run bench -- --trigger-in-process   trigger row without a real n8n
 *
 * Rows: bulk (bulk writes), feed (feed sync), feed-n8n (the feed walk in a real n8n), reports
 * (report polling), trigger (webhook trigger, real n8n), webhook-scale (the trigger in queue mode
 * with 2 webhook processes vs n8n's Webhook node; its own real n8n stack), embedded-default (the same
 * receivers in one n8n process on SQLite at n8n's defaults; its own real n8n), recovery-cost
 * (recovery's requests per day per workflow, in-process on moved clocks), concurrency (expired key, 50 executions,
 * in-process), concurrency-n8n (the same in a real n8n). Each in-process row runs in its own child process (a fresh process: its peak memory
 * and its module state, such as the rate-limit buckets and the token-exchange memory, are its
 * own); the real-n8n rows share one child and one n8n. Children run one after the other so that
 * rows do not compete for the CPU.
 */
import { execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { RowResult } from './lib/common';
import { progress } from './lib/common';

const ROWS = [
	'bulk',
	'feed',
	'feed-n8n',
	'reports',
	'trigger',
	'webhook-scale',
	'embedded-default',
	'recovery-cost',
	'concurrency',
	'concurrency-n8n',
] as const;
type RowId = (typeof ROWS)[number];
/** the row numbers of the README table */
const NUMBER: Record<RowId, string> = {
	bulk: '1',
	feed: '2',
	'feed-n8n': '2b',
	reports: '3',
	trigger: '4',
	'webhook-scale': '4b, 4c',
	'embedded-default': '4d',
	'recovery-cost': '4e',
	concurrency: '5',
	'concurrency-n8n': '5b',
};
/**
 * rows that share one real n8n run in one child process, after the others, in this order: the
 * feed row last, as it leaves 100,000 records in the shared sandbox and a larger heap in n8n
 */
const REAL_N8N_ROWS: RowId[] = ['trigger', 'concurrency-n8n', 'feed-n8n'];

export interface RowOptions {
	quick: boolean;
	triggerInProcess: boolean;
}

async function loadRow(id: RowId): Promise<(options: RowOptions) => Promise<RowResult>> {
	switch (id) {
		case 'bulk':
			return (await import('./rows/bulkWrites')).run;
		case 'feed':
			return (await import('./rows/feedSync')).run;
		case 'feed-n8n':
			return (await import('./rows/feedN8n')).run;
		case 'reports':
			return (await import('./rows/reportPolling')).run;
		case 'trigger':
			return (await import('./rows/trigger')).run;
		case 'webhook-scale':
			return (await import('./rows/webhookScale')).run;
		case 'embedded-default':
			return (await import('./rows/embeddedDefault')).run;
		case 'recovery-cost':
			return (await import('./rows/recoveryCost')).run;
		case 'concurrency':
			return (await import('./rows/concurrency')).run;
		case 'concurrency-n8n':
			return (await import('./rows/concurrencyN8n')).run;
	}
}

// ------------------------------------------------------------------------------------------
// Child: runs one row, sends its result over IPC (stdout may carry n8n's console output)

async function runChild(ids: RowId[], options: RowOptions): Promise<void> {
	const results: RowResult[] = [];
	for (const id of ids) {
		const t0 = Date.now();
		try {
			const run = await loadRow(id);
			results.push(await run(options));
		} catch (error) {
			results.push(failedRow(id, (error as Error)?.stack ?? String(error), Date.now() - t0));
		}
	}
	if (ids.some((id) => REAL_N8N_ROWS.includes(id))) {
		const { stopRealN8n } = await import('./lib/realN8n');
		await stopRealN8n().catch((error: unknown) =>
			progress(`stopping the real n8n failed: ${(error as Error)?.message}`),
		);
	}
	await new Promise<void>((resolve) => process.send!({ results }, () => resolve()));
	process.exit(0);
}

function failedRow(id: RowId, error: string, durationMs = 0): RowResult {
	return { id, title: id, mode: '', settings: {}, metrics: [], notes: [], durationMs, error };
}

function runGroupInChild(ids: RowId[], options: RowOptions): Promise<RowResult[]> {
	return new Promise((resolve) => {
		const args = [
			'--child',
			ids.join(','),
			...(options.quick ? ['--quick'] : []),
			...(options.triggerInProcess ? ['--trigger-in-process'] : []),
		];
		const child = fork(__filename, args, {
			execArgv: [...process.execArgv, '--expose-gc'],
			// a row's stdout (n8n-core prints some errors there) goes to stderr: stdout carries the table only
			stdio: ['ignore', process.stderr, 'inherit', 'ipc'],
		});
		let results: RowResult[] | undefined;
		child.on('message', (message: { results?: RowResult[] }) => {
			if (message?.results) results = message.results;
		});
		child.on('exit', (code, signal) => {
			resolve(
				results ??
					ids.map((id) =>
						failedRow(
							id,
							`the row's process ended (code ${code}, signal ${signal}) without a result`,
						),
					),
			);
		});
	});
}

// ------------------------------------------------------------------------------------------
// Machine, versions

function versionOf(pkg: string): string | undefined {
	try {
		return (
			JSON.parse(fs.readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as {
				version: string;
			}
		).version;
	} catch {
		return undefined;
	}
}

function git(args: string[]): string | undefined {
	try {
		return execFileSync('git', args, { cwd: path.join(__dirname, '..'), encoding: 'utf8' }).trim();
	} catch {
		return undefined;
	}
}

function machine() {
	const cpus = os.cpus();
	return {
		cpus: cpus.length,
		cpuModel: cpus[0]?.model.trim(),
		memoryGiB: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
		platform: `${os.platform()} ${os.release()} ${os.arch()}`,
		nodeVersion: process.version,
		loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
	};
}

async function realN8nVersions(): Promise<{ n8n: string; node: string | undefined }> {
	const { N8N_VERSION, n8nPaths } = await import('../scripts/n8n/paths');
	let node: string | undefined;
	try {
		node = execFileSync(n8nPaths().node24Bin, ['--version'], { encoding: 'utf8' }).trim();
	} catch {
		node = undefined;
	}
	return { n8n: N8N_VERSION, node };
}

// ------------------------------------------------------------------------------------------
// Output

function pad(text: string, width: number) {
	return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

function tableLines(results: RowResult[]): string[][] {
	const lines: string[][] = [];
	results.forEach((row) => {
		const label = `${NUMBER[row.id as RowId] ?? '?'}. ${row.title}`;
		if (row.error) {
			lines.push([label, 'ERROR', row.error.split('\n')[0], '', 'MISS']);
			return;
		}
		row.metrics.forEach((m, i) => {
			lines.push([
				i === 0 ? label : '',
				m.name,
				m.display,
				m.target ?? '',
				m.verdict === 'info' ? '' : m.verdict,
			]);
		});
	});
	return lines;
}

function textTable(results: RowResult[]): string {
	const header = ['Row', 'Metric', 'Value', 'Target', 'Result'];
	const rows = tableLines(results);
	const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
	const out = [
		header.map((h, c) => pad(h, widths[c])).join('  '),
		widths.map((w) => '-'.repeat(w)).join('  '),
	];
	for (const r of rows)
		out.push(
			r
				.map((cell, c) => pad(cell, widths[c]))
				.join('  ')
				.trimEnd(),
		);
	return out.join('\n');
}

function markdown(report: Report): string {
	const esc = (s: string) => s.replace(/\|/g, '\\|');
	const m = report.machine;
	const lines = [
		'# `npm run bench`: latest results',
		'',
		`- Date: ${report.date}`,
		`- Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.platform}; load average at start ${m.loadAverageAtStart.join(' / ')}, at end ${report.loadAverageAtEnd.join(' / ')}`,
		`- Bench process: Node ${m.nodeVersion}, n8n-core ${report.versions.n8nCore}, n8n-workflow ${report.versions.n8nWorkflow} (in-process rows)`,
		`- Real n8n: ${report.versions.realN8n.n8n} on Node ${report.versions.realN8n.node ?? '?'} (rows marked real n8n)`,
		`- Commit: ${report.git.commit}${report.git.dirty ? ' (working tree had uncommitted changes)' : ''}`,
		`- Options: ${report.options.join(' ') || '(none)'}; total ${(report.durationMs / 1000).toFixed(0)} s`,
		'',
		'| Row | Metric | Value | Target | Result |',
		'|---|---|---|---|---|',
		...tableLines(report.rows).map((r) => `| ${r.map(esc).join(' | ')} |`),
		'',
	];
	report.rows.forEach((row) => {
		lines.push(
			`**${NUMBER[row.id as RowId] ?? '?'}. ${row.title}** — ${row.mode || 'n/a'}; ${(row.durationMs / 1000).toFixed(0)} s; settings: \`${JSON.stringify(row.settings)}\``,
		);
		for (const note of row.notes) lines.push(`- ${note}`);
		if (row.error) lines.push(`- ERROR: ${row.error.split('\n')[0]}`);
		lines.push('');
	});
	return lines.join('\n');
}

interface Report {
	date: string;
	machine: ReturnType<typeof machine>;
	loadAverageAtEnd: number[];
	versions: { n8nCore?: string; n8nWorkflow?: string; realN8n: { n8n: string; node?: string } };
	git: { commit?: string; dirty: boolean };
	options: string[];
	durationMs: number;
	rows: RowResult[];
}

// ------------------------------------------------------------------------------------------

async function main() {
	const argv = process.argv.slice(2);
	const quick = argv.includes('--quick');
	const triggerInProcess = argv.includes('--trigger-in-process') || quick;
	const childIndex = argv.indexOf('--child');
	if (childIndex >= 0) {
		await runChild((argv[childIndex + 1] ?? '').split(',') as RowId[], { quick, triggerInProcess });
		return;
	}
	const onlyIndex = argv.indexOf('--only');
	let rows: RowId[] = [...ROWS];
	if (onlyIndex >= 0) {
		const wanted = (argv[onlyIndex + 1] ?? '')
			.split(',')
			.map((s) => s.trim())
			.filter(Boolean);
		const unknown = wanted.filter((w) => !(ROWS as readonly string[]).includes(w));
		if (!wanted.length || unknown.length) {
			process.stderr.write(
				`--only needs a comma-separated list of: ${ROWS.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}\n`,
			);
			process.exit(2);
		}
		rows = ROWS.filter((r) => wanted.includes(r));
	} else if (quick) {
		rows = rows.filter(
			(r) =>
				r !== 'concurrency-n8n' &&
				r !== 'feed-n8n' &&
				r !== 'webhook-scale' &&
				r !== 'embedded-default',
		);
	}

	const t0 = Date.now();
	const date = new Date().toISOString();
	const info = machine();
	progress(
		`machine: ${info.cpus} × ${info.cpuModel}, ${info.memoryGiB} GiB, Node ${info.nodeVersion}, load ${info.loadAverageAtStart.join(' / ')}`,
	);
	// one child per in-process row, then one child for the rows that share the real n8n
	const usesRealN8n = (id: RowId) =>
		id === 'concurrency-n8n' || id === 'feed-n8n' || (id === 'trigger' && !triggerInProcess);
	const groups: RowId[][] = rows.filter((id) => !usesRealN8n(id)).map((id) => [id]);
	const realGroup = REAL_N8N_ROWS.filter((id) => rows.includes(id) && usesRealN8n(id));
	if (realGroup.length) groups.push(realGroup);
	const collected: RowResult[] = [];
	for (const group of groups) {
		progress(`row ${group.join(' + ')} ...`);
		for (const result of await runGroupInChild(group, { quick, triggerInProcess })) {
			progress(
				`row ${result.id}: ${result.error ? `ERROR ${result.error.split('\n')[0]}` : 'done'} in ${(result.durationMs / 1000).toFixed(1)} s`,
			);
			collected.push(result);
		}
	}
	const results = ROWS.flatMap((id) => collected.filter((r) => r.id === id));

	const report: Report = {
		date,
		machine: info,
		loadAverageAtEnd: os.loadavg().map((l) => Number(l.toFixed(2))),
		versions: {
			n8nCore: versionOf('n8n-core'),
			n8nWorkflow: versionOf('n8n-workflow'),
			realN8n: await realN8nVersions(),
		},
		git: {
			commit: git(['rev-parse', '--short', 'HEAD']),
			dirty: (git(['status', '--porcelain', '--', 'nodes', 'credentials']) ?? '') !== '',
		},
		options: argv,
		durationMs: Date.now() - t0,
		rows: results,
	};
	const dir = path.join(__dirname, 'results');
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
	fs.writeFileSync(path.join(dir, 'latest.md'), markdown(report));

	const m = report.machine;
	process.stdout.write(
		[
			'',
			`npm run bench — ${date}`,
			`machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.nodeVersion}; load ${m.loadAverageAtStart.join(' / ')} → ${report.loadAverageAtEnd.join(' / ')}`,
			`n8n: n8n-core ${report.versions.n8nCore} in-process; real n8n ${report.versions.realN8n.n8n} on Node ${report.versions.realN8n.node ?? '?'}; commit ${report.git.commit}${report.git.dirty ? ' (dirty)' : ''}`,
			'',
			textTable(results),
			'',
			`written: bench/results/latest.json, bench/results/latest.md (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
			'',
		].join('\n'),
	);
	// a MISS is a result, not a failure of the script; a row that could not run is
	process.exitCode = results.some((r) => r.error) ? 1 : 0;
}

main().catch((error) => {
	process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
	process.exit(1);
});
