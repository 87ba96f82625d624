// The sandbox learning-platform API as a child process (`sandbox/cli.ts`), and a small client for
// its control API (`/__sandbox/...`). A separate process keeps the API answering while the test
// process is busy, and is what `npm run sandbox` runs too.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
	SandboxClient,
	credentialData,
	type AuthState,
	type DeliveryAttempt,
	type SubscriptionState,
	type TokenGrant,
} from '../../sandbox/client';
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
	control: SandboxClient;
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
			control: new SandboxClient(ready.url),
			stop: async () => {
				await proc.stop(5000);
			},
		};
	});
}

/** The sandbox's control client (`/__sandbox`) is the one in sandbox/client.ts; these are its types. */
export type SandboxUser = TokenGrant;
export type SandboxAuthState = AuthState;
export type SandboxDelivery = DeliveryAttempt;
export type SandboxSubscription = SubscriptionState;

/** A learningPlatformApi credential for `n8n import:credentials`, for a sandbox user. */
export function sandboxCredential(
	id: string,
	name: string,
	user: SandboxUser | SandboxReady,
): { id: string; name: string; type: string; data: Record<string, unknown> } {
	const ready = user as SandboxReady;
	const grant: TokenGrant =
		typeof user.refresh_token === 'string'
			? (user as TokenGrant)
			: {
					base_url: ready.url,
					tenancy_id: ready.tenancyId,
					username: ready.username,
					refresh_token: ready.refreshToken,
				};
	return { id, name, type: 'learningPlatformApi', data: credentialData(grant) };
}
