/**
 * Helpers of the credential and transport tests: a test-only node type that calls the transport
 * (run through n8n-core's real WorkflowExecute by test/support/n8n.ts), raw access to the sandbox
 * as "another process" would have it, and secret collection for the no-secret-in-errors checks.
 */
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { apiRequest, listAll } from '../../nodes/shared/transport';
import type { ApiRoot } from '../../nodes/shared/transport/config';
import type { ApiRequestOptions } from '../../nodes/shared/transport/request';
import type { SandboxHandle } from '../../sandbox';
import { http, roots, uniqueUser } from '../sandbox/helpers';
import type { CredentialStore } from '../support/n8n';
import { newSandboxUser } from '../support/sandboxUser';

export interface ProbeCall {
	method?: IHttpRequestMethods;
	root?: ApiRoot;
	path?: string;
	options?: Omit<ApiRequestOptions, 'itemIndex'>;
	/** use listAll(path, {limit}) instead */
	allPages?: { path: string; limit?: number; qs?: IDataObject };
}

export interface ProbePlan {
	/** one call per entry; all started at once when `concurrent` */
	calls?: ProbeCall[];
	concurrent?: boolean;
	/** one call per input item (itemIndex = item), the item's json merged over `perItem` */
	perItem?: ProbeCall;
	/** rethrow the first error (the node fails) instead of reporting it as an item */
	throwErrors?: boolean;
}

export interface ProbeResult {
	ok: boolean;
	body?: unknown;
	error?: {
		message: string;
		description?: string;
		httpCode?: string | null;
		itemIndex?: number;
		dump: string;
	};
}

/** Every string reachable from an error object (own properties, cause chain), for secret checks. */
export function dumpError(error: unknown): string {
	const seen = new Set<unknown>();
	const parts: string[] = [];
	const walk = (v: unknown, depth: number) => {
		if (depth > 6 || v === null || v === undefined) return;
		if (typeof v === 'string') return void parts.push(v);
		if (typeof v !== 'object' || seen.has(v)) return;
		seen.add(v);
		for (const key of Object.getOwnPropertyNames(v)) {
			if (key === 'node' || key === 'stack') continue;
			try {
				walk((v as Record<string, unknown>)[key], depth + 1);
			} catch {
				// getters may throw
			}
		}
	};
	walk(error, 0);
	try {
		parts.push(JSON.stringify(error));
	} catch {
		// circular: the walk above covered it
	}
	return parts.join('\n');
}

function describeError(error: unknown): ProbeResult['error'] {
	const e = error as Error & {
		description?: string;
		httpCode?: string | null;
		context?: IDataObject;
	};
	return {
		message: e.message,
		description: e.description,
		httpCode: e.httpCode,
		itemIndex: e.context?.itemIndex as number | undefined,
		dump: dumpError(error),
	};
}

/** A node type for tests: its execute() calls the transport as the plan says. */
export class ProbeNode implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'LP Probe',
		name: 'lpProbe',
		group: ['transform'],
		version: 1,
		description: 'test-only caller of the Learning Platform transport',
		defaults: { name: 'LP Probe' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'learningPlatformApi', required: true }],
		properties: [],
	};

	execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;

	constructor(plan: ProbePlan) {
		// n8n calls execute with the execution context as `this`: the plan travels in the closure
		this.execute = makeExecute(plan);
	}
}

function makeExecute(plan: ProbePlan) {
	return async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const run = async (call: ProbeCall, itemIndex?: number): Promise<ProbeResult> => {
			try {
				const body = call.allPages
					? await listAll.call(this, call.allPages.path, {
							limit: call.allPages.limit,
							qs: call.allPages.qs,
							itemIndex,
						})
					: await apiRequest.call(
							this,
							call.method ?? 'GET',
							call.root ?? 'webhook',
							call.path ?? '',
							{
								...(call.options ?? {}),
								itemIndex,
							},
						);
				return { ok: true, body };
			} catch (error) {
				if (plan.throwErrors) throw error;
				return { ok: false, error: describeError(error) };
			}
		};

		let results: ProbeResult[];
		if (plan.perItem) {
			const items = this.getInputData();
			results = [];
			for (let i = 0; i < items.length; i++) {
				results.push(await run({ ...plan.perItem, ...(items[i].json as ProbeCall) }, i));
			}
		} else if (plan.concurrent) {
			results = await Promise.all((plan.calls ?? []).map(async (call) => await run(call)));
		} else {
			results = [];
			for (const call of plan.calls ?? []) results.push(await run(call));
		}
		return [
			results.map((r, i) => ({
				json: r as unknown as IDataObject,
				pairedItem: { item: plan.perItem ? i : 0 },
			})),
		];
	};
}

export function probe(plan: ProbePlan): ProbeNode {
	return new ProbeNode(plan);
}

// ---------------------------------------------------------------------------------------------
// The sandbox, seen from outside n8n

export const OTHER_UA = 'another-process/1.0';

export { roots };

export async function rawGet(url: string, token?: string): Promise<{ status: number; json: any }> {
	const { status, json } = await http('GET', url, {
		token,
		ua: false,
		headers: { 'user-agent': OTHER_UA },
	});
	return { status, json };
}

/** An exchange done by "another n8n process" (straight to the API). */
export async function exchangeElsewhere(sb: SandboxHandle, username: string, refreshToken: string) {
	const res = await rawGet(
		`${roots(sb).report}/apikeys?username=${encodeURIComponent(username)}`,
		refreshToken,
	);
	return res as {
		status: number;
		json: { api_key: string; refresh_token: string; expires_in: number };
	};
}

/** A fresh API user (isolation: own tokens, own rate-limit bucket) and its credential row. */
export async function newCredential(
	sb: SandboxHandle,
	prefix = 'tx',
	extra: ICredentialDataDecryptedObject = {},
) {
	const user = await newSandboxUser(sb, uniqueUser(prefix), extra);
	return {
		username: user.username,
		refreshToken: user.refreshToken,
		store: user.credentials,
		data: user.data,
	};
}

/**
 * The credential row as n8n stores it after an exchange: `data` with the grant's pair and the
 * key's expiry `ttlMs` from now.
 */
export function withPair(
	data: ICredentialDataDecryptedObject,
	grant: { refresh_token: string; api_key: string },
	ttlMs = 86_400_000,
): ICredentialDataDecryptedObject {
	return {
		...data,
		refreshToken: grant.refresh_token,
		apiKey: grant.api_key,
		apiKeyExpiresAt: new Date(Date.now() + ttlMs).toISOString(),
	};
}

/** Secret registry: every token/key a test saw, to assert none appears in an error text. */
export class Secrets {
	private readonly values = new Set<string>();

	add(...values: Array<string | null | undefined>) {
		for (const v of values) if (typeof v === 'string' && v.length >= 8) this.values.add(v);
	}

	/** Registers the user's current pair and returns the auth state it came from. */
	async addLive(sb: SandboxHandle, username: string) {
		const auth = await sb.control.auth(username);
		this.add(auth.refresh_token, auth.api_key);
		return auth;
	}

	addStore(store: CredentialStore) {
		const d = store.data;
		this.add(d.refreshToken as string, d.apiKey as string);
		for (const w of store.writes) this.add(w.refreshToken as string, w.apiKey as string);
	}

	/** The secrets found in `text` (should be none). */
	foundIn(text: string): string[] {
		return [...this.values].filter((v) => text.includes(v));
	}

	get size() {
		return this.values.size;
	}
}

export function outputOf(result: { output: INodeExecutionData[][] }): ProbeResult[] {
	return (result.output[0] ?? []).map((item) => item.json as unknown as ProbeResult);
}
