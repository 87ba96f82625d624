// The sandbox learning-platform API as a child process (`sandbox/cli.ts`), and a small client for
// its control API (`/__sandbox/...`). A separate process keeps the API answering while the test
// process is busy, and is what `npm run sandbox` runs too.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { step } from './log';
import { REPO_ROOT } from './paths';
import { cleanNpmEnv, spawnManaged, type ManagedProcess } from './processes';

export interface SandboxReady {
	url: string;
	tenancyId: string;
	username: string;
	refreshToken: string;
	[key: string]: unknown;
}

export interface SandboxApi extends SandboxReady {
	process: ManagedProcess;
	control: SandboxControl;
	stop(): Promise<void>;
}

export interface StartSandboxApiOptions {
	port: number;
	/** JSON state file: issued tokens survive restarts. */
	stateFile?: string;
	/** PEM file of the CA that signs the TLS front (deliveries verify against it). */
	trustCaFile?: string;
	logFile?: string;
	extraArgs?: string[];
	env?: Record<string, string>;
	echo?: boolean;
}

export async function startSandboxApi(options: StartSandboxApiOptions): Promise<SandboxApi> {
	return step(`start sandbox API (port ${options.port})`, async () => {
		const cli = path.join(REPO_ROOT, 'sandbox', 'cli.ts');
		if (!fs.existsSync(cli))
			throw new Error(`${cli} is missing: the sandbox API is not in this checkout yet`);
		const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
		const args = [cli, '--port', String(options.port)];
		if (options.stateFile) args.push('--state', options.stateFile);
		if (options.trustCaFile) args.push('--trust-ca', options.trustCaFile);
		args.push(...(options.extraArgs ?? []));
		const proc = spawnManaged('sandbox-api', tsx, args, {
			cwd: REPO_ROOT,
			env: cleanNpmEnv(options.env ?? {}),
			logFile: options.logFile,
			echo: options.echo,
		});
		const match = await proc.waitForLine(/SANDBOX_READY\s+(\{.*\})/, 60_000);
		const ready = JSON.parse(match[1]) as SandboxReady;
		return {
			...ready,
			process: proc,
			control: new SandboxControl(ready.url),
			stop: async () => {
				await proc.stop(5000);
			},
		};
	});
}

export interface SandboxUser {
	username: string;
	tenancy_id: string;
	base_url: string;
	refresh_token: string;
}

export interface SandboxAuthState {
	refresh_token: string;
	api_key: string;
	api_key_expires_at: string | number | null;
	exchanges: number;
	failed_exchanges: number;
	[key: string]: unknown;
}

export interface SandboxDelivery {
	id?: number | string;
	subscription_id?: number;
	url: string;
	status?: number | null;
	status_code?: number | null;
	body?: string;
	headers?: Record<string, string>;
	[key: string]: unknown;
}

export interface SandboxSubscription {
	id: number;
	event: string;
	url: string;
	signing_key?: string | null;
	auth_token?: string | null;
	is_enabled?: boolean;
	deleted?: boolean;
	deleted_at?: string | null;
	[key: string]: unknown;
}

/** Client of the sandbox control API (`/__sandbox`). */
export class SandboxControl {
	constructor(readonly url: string) {}

	async call<T = unknown>(method: string, pathname: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.url}/__sandbox${pathname}`, {
			method,
			headers: {
				accept: 'application/json',
				'user-agent': 'lp-harness',
				...(body !== undefined ? { 'content-type': 'application/json' } : {}),
			},
			body: body !== undefined ? JSON.stringify(body) : undefined,
			signal: AbortSignal.timeout(30_000),
		});
		const text = await response.text();
		if (!response.ok)
			throw new Error(
				`sandbox control ${method} ${pathname} -> ${response.status}: ${text.slice(0, 500)}`,
			);
		return (text ? JSON.parse(text) : undefined) as T;
	}

	/**
	 * A refresh token for `username`, creating that API user when it is new (isolation per test:
	 * pass a new name). Kills the user's previous token; without a name: the default user's.
	 */
	newUser(username?: string): Promise<SandboxUser> {
		return this.call('POST', '/refresh-tokens', username ? { username } : {});
	}

	/** The live credential pair and exchange counters of a user. */
	auth(username: string): Promise<SandboxAuthState> {
		return this.call('GET', `/auth/${encodeURIComponent(username)}`);
	}

	expireApiKey(username: string): Promise<unknown> {
		return this.call('POST', `/auth/${encodeURIComponent(username)}/expire-api-key`, {});
	}

	requests<T = unknown[]>(): Promise<T> {
		return this.call('GET', '/requests');
	}

	stats<T = Record<string, unknown>>(): Promise<T> {
		return this.call('GET', '/stats');
	}

	config(patch: Record<string, unknown>): Promise<unknown> {
		return this.call('PATCH', '/config', patch);
	}

	/** Fires `Events\Courses\Completion_created` to the matching subscriptions. */
	simulateCompletion(
		body: { userId?: number; contentId?: number; username?: string } = {},
	): Promise<Record<string, unknown>> {
		return this.call('POST', '/simulate/completion', body);
	}

	async deliveries(username?: string): Promise<SandboxDelivery[]> {
		const result = await this.call<unknown>(
			'GET',
			`/deliveries${username ? `?username=${encodeURIComponent(username)}` : ''}`,
		);
		return unwrapList<SandboxDelivery>(result, 'deliveries');
	}

	async subscriptions(username?: string): Promise<SandboxSubscription[]> {
		const result = await this.call<unknown>(
			'GET',
			`/subscriptions${username ? `?username=${encodeURIComponent(username)}` : ''}`,
		);
		return unwrapList<SandboxSubscription>(result, 'subscriptions');
	}

	advanceClock(advanceMs: number): Promise<unknown> {
		return this.call('POST', '/clock', { advanceMs });
	}
}

function unwrapList<T>(value: unknown, key: string): T[] {
	if (Array.isArray(value)) return value as T[];
	if (value && typeof value === 'object') {
		const obj = value as Record<string, unknown>;
		if (Array.isArray(obj[key])) return obj[key] as T[];
		if (Array.isArray(obj.data)) return obj.data as T[];
	}
	throw new Error(`unexpected ${key} response: ${JSON.stringify(value).slice(0, 300)}`);
}

/** A learningPlatformApi credential for `n8n import:credentials`, for a sandbox user. */
export function sandboxCredential(
	id: string,
	name: string,
	user: SandboxUser | SandboxReady,
): { id: string; name: string; type: string; data: Record<string, unknown> } {
	const u = user as Partial<SandboxUser & SandboxReady>;
	return {
		id,
		name,
		type: 'learningPlatformApi',
		data: {
			baseUrl: u.base_url ?? u.url,
			tenancyId: String(u.tenancy_id ?? u.tenancyId),
			username: u.username,
			refreshToken: u.refresh_token ?? u.refreshToken,
			apiKey: '',
			apiKeyExpiresAt: '',
		},
	};
}
