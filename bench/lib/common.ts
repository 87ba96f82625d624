/**
 * Shared pieces of the bench rows: the result model, progress output, a sandbox API in its own
 * process (so its CPU time and memory are not counted against the node under test), API users,
 * and small statistics helpers.
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

import { SandboxClient } from '../../sandbox/client';
import { freePort } from '../../scripts/n8n/ports';
import { startSandboxApi, type SandboxApi } from '../../scripts/n8n/sandbox-api';
import type { CredentialStore } from '../../test/support/n8n';
import { newSandboxUser } from '../../test/support/sandboxUser';

// ------------------------------------------------------------------------------------------
// Result model

export type Verdict = 'PASS' | 'MISS' | 'info';

export interface Metric {
	/** what is measured, e.g. "achieved rate ÷ limit" */
	name: string;
	/** the figure itself (number when it is one) */
	value: number | string | null;
	/** how to print it, e.g. "1.000", "12 %", "3.4 s" */
	display: string;
	/** e.g. "≥ 0.95"; absent for informational figures */
	target?: string;
	verdict: Verdict;
}

export interface RowResult {
	id: string;
	title: string;
	/** where the node code ran: n8n-core's WorkflowExecute in the bench process, or a real n8n */
	mode: string;
	/** the setting of the run (limits, counts, sandbox configuration) */
	settings: Record<string, unknown>;
	metrics: Metric[];
	notes: string[];
	durationMs: number;
	/** the row could not run (the error) */
	error?: string;
}

/** The result of a row that could not run: no metrics, only the error (and any notes so far). */
export function failedResult(
	row: { id: string; title: string; mode: string; notes?: string[] },
	startedAt: number,
	error: unknown,
): RowResult {
	return {
		id: row.id,
		title: row.title,
		mode: row.mode,
		settings: {},
		metrics: [],
		notes: row.notes ?? [],
		durationMs: Date.now() - startedAt,
		error: errorText(error),
	};
}

export function metric(
	name: string,
	value: number | string | null,
	display: string,
	target?: { text: string; pass: boolean },
): Metric {
	return {
		name,
		value,
		display,
		...(target
			? { target: target.text, verdict: target.pass ? 'PASS' : 'MISS' }
			: { verdict: 'info' }),
	};
}

// ------------------------------------------------------------------------------------------
// Progress (stderr; stdout of a row child is reserved for its result)

const started = Date.now();
export function progress(message: string): void {
	const s = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
	process.stderr.write(`[bench +${s}s] ${message}\n`);
}

// ------------------------------------------------------------------------------------------
// Sandbox API in a child process

export interface BenchSandbox {
	api: SandboxApi;
	url: string;
	tenancyId: string;
	control: SandboxClient;
	stop(): Promise<void>;
}

export async function startBenchSandbox(options: {
	rateLimitPerMinute: number;
	demo?: boolean;
	trustCaFile?: string;
	logName?: string;
	port?: number;
}): Promise<BenchSandbox> {
	const port = options.port ?? (await freePort());
	const args = ['--quiet', '--rate-limit', String(options.rateLimitPerMinute)];
	if (options.demo === false) args.push('--no-demo');
	const api = await startSandboxApi({
		port,
		extraArgs: args,
		trustCaFile: options.trustCaFile,
		logFile: path.join(os.tmpdir(), `lp-bench-${options.logName ?? 'sandbox'}-${process.pid}.log`),
	});
	const control = new SandboxClient(api.url);
	return {
		api,
		url: api.url,
		tenancyId: api.tenancyId,
		control,
		stop: async () => {
			await control.close();
			await api.stop();
		},
	};
}

/** A fresh API user (own rate-limit bucket, own keys) and the credential n8n would store for it. */
export function newApiUser(
	sandbox: BenchSandbox,
	name: string,
): Promise<{ username: string; credentials: CredentialStore }> {
	return newSandboxUser(sandbox, `bench-${name}-${process.pid}`);
}

// ------------------------------------------------------------------------------------------
// Statistics and formatting

export function percentile(values: number[], p: number): number {
	if (!values.length) return NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[rank];
}

export function median(values: number[]): number {
	return percentile(values, 50);
}

export function mean(values: number[]): number {
	return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/** A row's size from the environment variable `name`: an integer ≥ min, else `fallback`. */
export const sizeFromEnv = (name: string, fallback: number, min: number): number => {
	const raw = process.env[name];
	const value = raw === undefined || raw === '' ? fallback : Number(raw);
	if (!Number.isInteger(value) || value < min)
		throw new Error(`${name} must be an integer ≥ ${min}, not '${raw}'`);
	return value;
};

/** Environment settings as a row's notes name them: `KEY=value, ...`. */
export const envListed = (env: Record<string, string>) =>
	Object.entries(env)
		.map(([k, v]) => `${k}=${v}`)
		.join(', ');

export function fixed(value: number, digits = 2): string {
	return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function seconds(ms: number, digits = 2): string {
	return Number.isFinite(ms) ? `${(ms / 1000).toFixed(digits)} s` : 'n/a';
}

export function mib(bytes: number): string {
	return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

export { sleep } from '../../sandbox/util';

/** Samples the RSS of this process every `everyMs` until stopped; returns the peak seen. */
export function rssSampler(everyMs = 20): { stop(): number } {
	let peak = process.memoryUsage.rss();
	const timer = setInterval(() => {
		const rss = process.memoryUsage.rss();
		if (rss > peak) peak = rss;
	}, everyMs);
	return {
		stop() {
			clearInterval(timer);
			return Math.max(peak, process.memoryUsage.rss());
		},
	};
}

/** The message (and description) of an error, also of the plain error objects n8n keeps in run data. */
export function errorText(error: unknown): string {
	if (
		error !== null &&
		typeof error === 'object' &&
		typeof (error as { message?: unknown }).message === 'string'
	) {
		const { message, description } = error as { message: string; description?: unknown };
		return typeof description === 'string' && description ? `${message} (${description})` : message;
	}
	return String(error);
}

// ------------------------------------------------------------------------------------------
// Client-side request times

export interface TappedRequest {
	/** Date.now() scale, sub-millisecond */
	start: number;
	end?: number;
	method: string;
	path: string;
	status?: number;
}

/**
 * Every request this process makes through `node:http` (n8n's request helper, i.e. axios, uses it;
 * undici does not), with client-side start and response times. The sandbox's request log stamps
 * whole seconds (its `Z` timestamps), too coarse for latencies below a few seconds.
 */
export function httpTap(): { requests: TappedRequest[]; stop(): void } {
	const requests: TappedRequest[] = [];
	const byRequest = new WeakMap<ClientRequest, TappedRequest>();
	const now = () => performance.timeOrigin + performance.now();
	const onStart = (message: unknown) => {
		const { request } = message as { request: ClientRequest };
		const entry: TappedRequest = { start: now(), method: request.method, path: request.path };
		byRequest.set(request, entry);
		requests.push(entry);
	};
	const onResponse = (message: unknown) => {
		const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
		const entry = byRequest.get(request);
		if (entry) {
			entry.end = now();
			entry.status = response.statusCode;
		}
	};
	diagnosticsChannel.subscribe('http.client.request.start', onStart);
	diagnosticsChannel.subscribe('http.client.response.finish', onResponse);
	return {
		requests,
		stop() {
			diagnosticsChannel.unsubscribe('http.client.request.start', onStart);
			diagnosticsChannel.unsubscribe('http.client.response.finish', onResponse);
		},
	};
}
