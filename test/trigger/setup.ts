/**
 * Shared set-up of the trigger tests: a sandbox per test file, a fresh API user (own
 * subscriptions, own rate-limit bucket) and a credential store for it, plus a direct API client
 * for arranging state the way another tool would (disable or delete a subscription behind n8n's
 * back, fill the 100-subscription cap).
 */
import type { IDataObject } from 'n8n-workflow';

import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../sandbox';
import { DEFAULT_CONFIG, type SandboxConfig } from '../../sandbox/store';
import { http, roots } from '../sandbox/helpers';
import type { CredentialStore } from '../support/n8n';
import { newSandboxUser } from '../support/sandboxUser';
import { exchangeElsewhere, withPair } from '../transport/helpers';

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

/**
 * The reading of the platform (the sandbox switches the spec leaves open) these tests run under:
 * the sandbox's defaults, or `LP_SANDBOX_READING` (JSON of switches), which `npm test` sets to
 * run the trigger's files again under the other readings. Tests that set a switch themselves
 * still do.
 */
export function readingUnderTest(): SandboxOptions {
	const reading = process.env.LP_SANDBOX_READING;
	return reading ? (JSON.parse(reading) as SandboxOptions) : {};
}

/** The redispatch requests the platform got for the subscription's log entries, in order. */
export async function redispatchRequestsOf(sandbox: SandboxHandle, subscriptionId: number) {
	return (await sandbox.control.requests({ path: '/redispatch' })).filter((r) =>
		r.path.includes(`/${subscriptionId}/logs/`),
	);
}

/** The log entries whose redispatch was asked for, in the order asked (under every reading). */
export async function askedEntriesOf(
	sandbox: SandboxHandle,
	subscriptionId: number,
): Promise<number[]> {
	return (await redispatchRequestsOf(sandbox, subscriptionId)).map((r) =>
		Number(r.path.split('/logs/')[1].split('/')[0]),
	);
}

/** The set-up's time-out for each delivery attempt (a test that needs longer sets and restores it). */
export const DELIVERY_TIMEOUT_MS = 1_000;

/** The set-up's own switches, which a reading (LP_SANDBOX_READING) may override. */
const SET_UP_SWITCHES = {
	rateLimitPerMinute: 100_000,
	// deliveries go to https://n8n.invalid/..., failed at once without DNS (sandbox/README.md):
	// one quick attempt, recorded, unless the reading brings the platform's retries back
	deliveryMaxAttempts: 1,
	deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
};

/** The switches in force for tests that do not set their own. */
export const platformReading: SandboxConfig = {
	...DEFAULT_CONFIG,
	...SET_UP_SWITCHES,
	...readingUnderTest(),
};

/** Time enough for the platform to give up on a failing delivery under the reading's retry schedule. */
export const GIVE_UP_MS =
	30_000 + platformReading.deliveryBackoffMs * 2 ** (platformReading.deliveryMaxAttempts - 1);

export async function setUpTriggerTests(
	name: string,
	options: SandboxOptions = {},
): Promise<TriggerTestContext> {
	const sandbox = await startSandbox({
		quiet: true,
		...SET_UP_SWITCHES,
		...readingUnderTest(),
		...options,
	});

	const newUser = async (suffix: string) => {
		const { username, credentials } = await newSandboxUser(
			sandbox,
			`trigger-${name}-${suffix}-${process.pid}-${++counter}`,
		);
		return { username, credentials };
	};
	const main = await newUser('main');

	const api = async (method: string, path: string, body?: IDataObject) => {
		let apiKey = (await sandbox.control.auth(main.username)).api_key;
		if (!apiKey) {
			// no exchange yet: do one, and store the rotated pair as n8n would
			const data = main.credentials.data;
			const { json: grant } = await exchangeElsewhere(
				sandbox,
				main.username,
				data.refreshToken as string,
			);
			main.credentials.replace(withPair(data, grant, grant.expires_in * 1000));
			apiKey = grant.api_key;
		}
		const response = await http(method, `${roots(sandbox).webhook}${path}`, {
			token: apiKey,
			body,
			ua: false,
			headers: { 'user-agent': 'trigger-tests' },
		});
		// callers see text that is not JSON as it came
		return {
			status: response.status,
			body: response.json === undefined && response.text ? response.text : response.json,
		};
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
