// Child processes of the harness. Every child is spawned as the leader of its own process group
// (n8n starts task runners of its own), so stopping it signals the whole group. Every child is
// registered: on normal exit, on SIGINT/SIGTERM and when a test fails the whole set is stopped,
// and a synchronous `exit` hook SIGKILLs whatever is still alive as a last resort.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { log } from './log';

export interface ExitInfo {
	code: number | null;
	signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
	name: string;
	child: ChildProcess;
	pid: number;
	logFile?: string;
	/** Resolves when the process has exited. */
	exited: Promise<ExitInfo>;
	hasExited(): boolean;
	/** Last lines of stdout+stderr, for error messages. */
	tail(lines?: number): string;
	/** Calls `fn` for every complete output line (stdout and stderr). Returns an unsubscribe function. */
	onLine(fn: (line: string, stream: 'stdout' | 'stderr') => void): () => void;
	/** Waits until an output line matches; rejects when the process exits first or on time-out. */
	waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
	/** SIGTERM to the group, SIGKILL after `graceMs`; resolves when the leader has exited. */
	stop(graceMs?: number): Promise<ExitInfo>;
}

const live = new Set<ManagedProcess>();
const cleanups: Array<{ name: string; fn: () => Promise<void> | void }> = [];

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		try {
			process.kill(pid, signal);
		} catch {
			/* already gone */
		}
	}
}

export interface SpawnManagedOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** stdout and stderr are appended here (created with its folder). */
	logFile?: string;
	/** Also echo output to this process' stderr with a prefix. */
	echo?: boolean;
}

export function spawnManaged(
	name: string,
	command: string,
	args: string[],
	options: SpawnManagedOptions = {},
): ManagedProcess {
	const spawnOptions: SpawnOptions = {
		cwd: options.cwd,
		env: options.env ?? process.env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	};
	const child = spawn(command, args, spawnOptions);
	if (child.pid === undefined) throw new Error(`could not spawn ${name} (${command})`);
	const pid = child.pid;

	let logStream: fs.WriteStream | undefined;
	if (options.logFile) {
		fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
		logStream = fs.createWriteStream(options.logFile, { flags: 'a' });
	}

	const tailBuffer: string[] = [];
	const listeners = new Set<(line: string, stream: 'stdout' | 'stderr') => void>();
	let exitInfo: ExitInfo | undefined;

	const attach = (stream: NodeJS.ReadableStream | null, kind: 'stdout' | 'stderr') => {
		if (!stream) return;
		let pending = '';
		stream.setEncoding('utf8');
		stream.on('data', (chunk: string) => {
			logStream?.write(chunk);
			pending += chunk;
			let index: number;
			while ((index = pending.indexOf('\n')) >= 0) {
				const line = pending.slice(0, index).replace(/\r$/, '');
				pending = pending.slice(index + 1);
				tailBuffer.push(line);
				if (tailBuffer.length > 400) tailBuffer.shift();
				if (options.echo) process.stderr.write(`[${name}] ${line}\n`);
				for (const fn of [...listeners]) fn(line, kind);
			}
		});
	};
	attach(child.stdout, 'stdout');
	attach(child.stderr, 'stderr');

	const exited = new Promise<ExitInfo>((resolve) => {
		child.on('exit', (code, signal) => {
			exitInfo = { code, signal };
			live.delete(managed);
			// Stragglers of the group (task runners) go with their leader.
			killGroup(pid, 'SIGKILL');
			// Let the pipes drain before closing the log.
			setTimeout(() => logStream?.end(), 50);
			resolve(exitInfo);
		});
		child.on('error', (error) => {
			tailBuffer.push(`spawn error: ${error.message}`);
			if (!exitInfo) {
				exitInfo = { code: -1, signal: null };
				live.delete(managed);
				resolve(exitInfo);
			}
		});
	});

	const managed: ManagedProcess = {
		name,
		child,
		pid,
		logFile: options.logFile,
		exited,
		hasExited: () => exitInfo !== undefined,
		tail: (lines = 40) => tailBuffer.slice(-lines).join('\n'),
		onLine(fn) {
			listeners.add(fn);
			return () => listeners.delete(fn);
		},
		waitForLine(re, timeoutMs) {
			return new Promise((resolve, reject) => {
				let unsubscribe = () => {};
				const timer = setTimeout(() => {
					unsubscribe();
					reject(
						new Error(
							`${name}: no output line matching ${re} within ${timeoutMs} ms\n${managed.tail()}`,
						),
					);
				}, timeoutMs);
				unsubscribe = managed.onLine((line) => {
					const match = line.match(re);
					if (match) {
						clearTimeout(timer);
						unsubscribe();
						resolve(match);
					}
				});
				void exited.then((info) => {
					clearTimeout(timer);
					unsubscribe();
					reject(
						new Error(
							`${name} exited (code ${info.code}, signal ${info.signal}) before printing ${re}\n${managed.tail()}`,
						),
					);
				});
			});
		},
		async stop(graceMs = 20_000) {
			if (exitInfo) return exitInfo;
			killGroup(pid, 'SIGTERM');
			const timer = setTimeout(() => {
				log(`${name} (pid ${pid}) did not stop within ${graceMs} ms: SIGKILL`);
				killGroup(pid, 'SIGKILL');
			}, graceMs);
			const info = await exited;
			clearTimeout(timer);
			return info;
		},
	};
	live.add(managed);
	installExitHook();
	return managed;
}

/** Registers a cleanup (server close, temp folder removal) run by `cleanupAll`, newest first. */
export function onCleanup(name: string, fn: () => Promise<void> | void): () => void {
	const entry = { name, fn };
	cleanups.push(entry);
	installExitHook();
	return () => {
		const index = cleanups.indexOf(entry);
		if (index >= 0) cleanups.splice(index, 1);
	};
}

/**
 * Empties `entries` from the newest to the oldest, running each one's `fn`; a failure is logged
 * (naming the entry) and the rest still run. The one loop behind `cleanupAll` and a stack's stop.
 */
export async function runNewestFirst(
	entries: Array<{ name: string; fn: () => Promise<void> | void }>,
	what: string,
): Promise<void> {
	while (entries.length) {
		const entry = entries.pop()!;
		try {
			await entry.fn();
		} catch (error) {
			log(`${what} ${entry.name} failed: ${(error as Error).message}`);
		}
	}
}

/** Stops every live child (in parallel) and runs the registered cleanups. Safe to call twice. */
export async function cleanupAll(): Promise<void> {
	const children = [...live];
	if (children.length)
		log(`stopping ${children.map((c) => `${c.name} (pid ${c.pid})`).join(', ')}`);
	await Promise.all(children.map((c) => c.stop().catch(() => undefined)));
	await runNewestFirst(cleanups, 'cleanup');
}

let exitHookInstalled = false;
function installExitHook(): void {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	process.on('exit', () => {
		for (const child of live) killGroup(child.pid, 'SIGKILL');
	});
}

let signalHandlersInstalled = false;
/**
 * For CLI entry points (not jest): Ctrl-C or SIGTERM stops every child cleanly, then exits.
 * A second Ctrl-C kills at once.
 */
export function installSignalHandlers(onSignal?: (signal: NodeJS.Signals) => void): void {
	if (signalHandlersInstalled) return;
	signalHandlersInstalled = true;
	let stopping = false;
	let firstAt = 0;
	const handler = (signal: NodeJS.Signals) => {
		// One Ctrl-C arrives twice: from the terminal and relayed by npm/tsx. Only a second press
		// (a while later) means "now".
		if (stopping && Date.now() - firstAt < 2000) return;
		if (stopping) {
			log(`${signal} again: killing everything now`);
			for (const child of live) killGroup(child.pid, 'SIGKILL');
			process.exit(130);
		}
		stopping = true;
		firstAt = Date.now();
		onSignal?.(signal);
		log(`${signal}: shutting down (press Ctrl-C again to kill at once)`);
		void cleanupAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
	};
	process.on('SIGINT', handler);
	process.on('SIGTERM', handler);
	process.on('SIGHUP', handler);
}

/** Runs a command to completion (not registered: short-lived), returning its output. */
export function run(
	command: string,
	args: string[],
	options: {
		cwd?: string;
		env?: NodeJS.ProcessEnv;
		logFile?: string;
		timeoutMs?: number;
		echo?: boolean;
		name?: string;
	} = {},
): Promise<{ code: number; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
	const name = options.name ?? path.basename(command);
	const managed = spawnManaged(name, command, args, {
		cwd: options.cwd,
		env: options.env,
		logFile: options.logFile,
		echo: options.echo,
	});
	let stdout = '';
	let stderr = '';
	managed.child.stdout?.on('data', (chunk: string) => (stdout += chunk));
	managed.child.stderr?.on('data', (chunk: string) => (stderr += chunk));
	let timer: NodeJS.Timeout | undefined;
	if (options.timeoutMs) {
		timer = setTimeout(() => {
			log(`${name}: time-out after ${options.timeoutMs} ms, killing`);
			void managed.stop(2000);
		}, options.timeoutMs);
	}
	return managed.exited.then((info) => {
		if (timer) clearTimeout(timer);
		return { code: info.code ?? (info.signal ? 128 : -1), signal: info.signal, stdout, stderr };
	});
}

/** Like `run`, but rejects with the output tail when the exit code is not 0. */
export async function runChecked(
	command: string,
	args: string[],
	options: Parameters<typeof run>[2] = {},
): Promise<{ stdout: string; stderr: string }> {
	const result = await run(command, args, options);
	if (result.code !== 0) {
		const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
		throw new Error(`${command} ${args.join(' ')} exited with ${result.code}\n${output}`);
	}
	return result;
}

/**
 * The caller's environment without the `npm_*` variables that `npm run`/`npx` export (among them
 * `npm_config_ignore_scripts=true` and `npm_config_local_prefix=<repo>`, which would make a nested
 * npm skip native builds or install into the repository), plus `extra`.
 */
export function cleanNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (/^npm_/i.test(key) || key === 'INIT_CWD') continue;
		env[key] = value;
	}
	env.npm_config_update_notifier = 'false';
	env.npm_config_fund = 'false';
	env.npm_config_audit = 'false';
	return { ...env, ...extra };
}
