/**
 * Shared set-up of the node tests: one sandbox per test file, a fresh API user per file
 * (isolation: own subscriptions, own rate-limit bucket), and a `run` that executes the
 * Learning Platform node through n8n-core's WorkflowExecute.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { LearningPlatform } from '../../nodes/LearningPlatform/LearningPlatform.node';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../sandbox';
import {
	executeNode,
	runLoadOptions,
	type CredentialStore,
	type ExecuteNodeResult,
} from '../support/n8n';
import { newSandboxUser } from '../support/sandboxUser';

export interface NodeTestContext {
	sandbox: SandboxHandle;
	credentials: CredentialStore;
	username: string;
	run(
		parameters: IDataObject,
		options?: { items?: INodeExecutionData[]; continueOnFail?: boolean },
	): Promise<ExecuteNodeResult>;
	load<T = unknown>(
		method: string,
		options?: { parameters?: IDataObject; filter?: string; paginationToken?: string },
	): Promise<T>;
	/** API requests the sandbox saw for this file's user, optionally only paths containing `path` */
	requests(
		path?: string,
	): Promise<
		Array<{ method: string; path: string; query: Record<string, string>; status: number | null }>
	>;
	close(): Promise<void>;
}

let counter = 0;

export async function setUpNodeTests(
	name: string,
	options: SandboxOptions = {},
): Promise<NodeTestContext> {
	const sandbox = await startSandbox({ quiet: true, rateLimitPerMinute: 6000, ...options });
	const { username, credentials } = await newSandboxUser(
		sandbox,
		`node-${name}-${process.pid}-${++counter}`,
	);
	return {
		sandbox,
		credentials,
		username,
		run: async (parameters, runOptions = {}) =>
			await executeNode({
				nodeType: new LearningPlatform(),
				parameters,
				items: runOptions.items ?? [{ json: {} }],
				credentials,
				continueOnFail: runOptions.continueOnFail ?? false,
			}),
		load: async <T>(
			method: string,
			loadOptions: { parameters?: IDataObject; filter?: string; paginationToken?: string } = {},
		) =>
			await runLoadOptions<T>(new LearningPlatform(), method, {
				credentials,
				parameters: loadOptions.parameters ?? {},
				filter: loadOptions.filter,
				paginationToken: loadOptions.paginationToken,
			}),
		requests: async (path?: string) => {
			const entries = await sandbox.control.requests({ username });
			return entries.filter(
				(entry) => entry.path !== undefined && (path === undefined || entry.path.includes(path)),
			);
		},
		close: async () => await sandbox.close(),
	};
}

/** The JSON of the main output's items. */
export function json(result: ExecuteNodeResult): IDataObject[] {
	return (result.output[0] ?? []).map((item) => item.json);
}

/** The input item index each output item is paired with. */
export function pairedItems(result: ExecuteNodeResult): number[] {
	return (result.output[0] ?? []).map((item) => {
		const paired = item.pairedItem;
		if (typeof paired === 'number') return paired;
		if (Array.isArray(paired)) return paired[0]?.item ?? -1;
		return paired?.item ?? -1;
	});
}
