/**
 * Shared set-up of the trigger tests: a sandbox per test file, a fresh API user (own
 * subscriptions, own rate-limit bucket) and a credential store for it, plus a direct API client
 * for arranging state the way another tool would (disable or delete a subscription behind n8n's
 * back, fill the 100-subscription cap).
 */
import type { IDataObject } from 'n8n-workflow';
import { request } from 'undici';

import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../sandbox';
import type { CredentialStore } from '../support/n8n';
import { newSandboxUser } from '../support/sandboxUser';

export interface TriggerTestContext {
	sandbox: SandboxHandle;
	credentials: CredentialStore;
	username: string;
	/** A spec request with the API key n8n obtained (or a fresh exchange when there is none yet). */
	api(method: string, path: string, body?: IDataObject): Promise<{ status: number; body: any }>;
	/** A new API user with its own credential store, for tests that need a clean slate. */
	newUser(name: string): Promise<{ username: string; credentials: CredentialStore }>;
	close(): Promise<void>;
}

let counter = 0;

export async function setUpTriggerTests(name: string, options: SandboxOptions = {}): Promise<TriggerTestContext> {
	const sandbox = await startSandbox({
		quiet: true,
		rateLimitPerMinute: 100_000,
		// deliveries go to https://n8n.test/... which does not resolve: one quick attempt, recorded
		deliveryMaxAttempts: 1,
		deliveryTimeoutMs: 1000,
		...options,
	});

	const newUser = async (suffix: string) => {
		const { username, credentials } = await newSandboxUser(sandbox, `trigger-${name}-${suffix}-${process.pid}-${++counter}`);
		return { username, credentials };
	};
	const main = await newUser('main');

	const api = async (method: string, path: string, body?: IDataObject) => {
		let apiKey = (await sandbox.control.auth(main.username)).api_key;
		if (!apiKey) {
			// no exchange yet: do one, and store the rotated pair as n8n would
			const data = main.credentials.data;
			const response = await request(
				`${sandbox.url}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${sandbox.tenancyId}/apikeys?username=${encodeURIComponent(main.username)}`,
				{ headers: { authorization: `Bearer ${data.refreshToken as string}`, 'user-agent': 'trigger-tests' } },
			);
			const grant = (await response.body.json()) as { api_key: string; refresh_token: string; expires_in: number };
			main.credentials.replace({
				...data,
				apiKey: grant.api_key,
				refreshToken: grant.refresh_token,
				apiKeyExpiresAt: new Date(Date.now() + grant.expires_in * 1000).toISOString(),
			});
			apiKey = grant.api_key;
		}
		const response = await request(`${sandbox.url}/api/v2/${sandbox.tenancyId}/webhooks${path}`, {
			method: method as 'GET',
			headers: {
				authorization: `Bearer ${apiKey}`,
				'user-agent': 'trigger-tests',
				accept: 'application/json',
				...(body ? { 'content-type': 'application/json' } : {}),
			},
			body: body ? JSON.stringify(body) : undefined,
		});
		const text = await response.body.text();
		let parsed: unknown = text;
		try {
			parsed = text ? JSON.parse(text) : undefined;
		} catch {
			// not JSON: keep the text
		}
		return { status: response.statusCode, body: parsed };
	};

	return {
		sandbox,
		credentials: main.credentials,
		username: main.username,
		api,
		newUser,
		close: async () => await sandbox.close(),
	};
}
