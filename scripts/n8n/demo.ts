// The demo content of `npm run sandbox`: `demo/credential.template.json` (filled with a sandbox
// user), the OpenAI credential of the scripted chat model (ai.ts) and `demo/workflows/*.json`
// (imported with n8n's CLI, activated when `"active": true`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { aiCredentialUpdate } from './ai';
import { N8nHttpError } from './client';
import { step } from './log';
import type { CredentialImport, WorkflowJson } from './n8n';
import { REPO_ROOT } from './paths';
import type { Stack } from './stack';

const DEMO_DIR = path.join(REPO_ROOT, 'demo');

export interface DemoCredentialValues {
	baseUrl: string;
	tenancyId: string;
	username: string;
	refreshToken: string;
}

export function demoCredential(values: DemoCredentialValues, name?: string): CredentialImport {
	const template = fs.readFileSync(path.join(DEMO_DIR, 'credential.template.json'), 'utf8');
	const filled = template.replace(/\{\{(\w+)\}\}/g, (_m, key: keyof DemoCredentialValues) => {
		const value = values[key];
		if (value === undefined) throw new Error(`credential template: no value for {{${key}}}`);
		return JSON.stringify(String(value)).slice(1, -1);
	});
	const credential = JSON.parse(filled) as CredentialImport;
	return name ? { ...credential, name } : credential;
}

export function demoWorkflows(): WorkflowJson[] {
	const dir = path.join(DEMO_DIR, 'workflows');
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as WorkflowJson);
}

export const DEMO_CREDENTIAL_ID = 'LpDemoCredential';

/**
 * What `npm run sandbox` sets up in n8n (also run by the e2e suite, so the demo files are checked
 * against the real nodes): the demo credential and the demo workflows, the `"active": true` ones
 * activated.
 *
 * - The credential is kept across restarts (the sandbox API's state keeps its rotated token
 *   alive). It is imported with a fresh refresh token of the sandbox's default API user on the
 *   first start, or when the sandbox state is gone (`apiStateExisted: false`), named
 *   `credentialName` when given (the browser test's pictures show a name a user would pick).
 * - `moreCredentials` are imported in the same CLI run (each run is a whole n8n start).
 * - Workflows are imported only when missing, so edits made in the editor survive restarts.
 */
export async function installDemo(
	stack: Stack,
	options: {
		apiStateExisted: boolean;
		credentialName?: string;
		moreCredentials?: CredentialImport[];
	},
): Promise<{ reactivated: boolean; imported: string[] }> {
	const { client, host, sandbox } = stack;
	if (!sandbox) throw new Error('the sandbox API is not running');
	const workflows = demoWorkflows();

	// n8n 1.x's public API cannot list credentials (405); its internal REST API can
	const credentials = await client
		.api<{ data: Array<{ id: string }> }>('GET', '/credentials?limit=250')
		.then((page) => page.data)
		.catch(async (error: unknown) => {
			if (!(error instanceof N8nHttpError) || error.status !== 405) throw error;
			// the REST client hands back the list itself (it unwraps `data`)
			return await client.rest<Array<{ id: string }>>('GET', '/credentials');
		});
	const hasCredential = credentials.some((c) => c.id === DEMO_CREDENTIAL_ID);
	let reactivate = false;
	// one CLI import for both credentials (each import is a whole n8n start, ~10 s)
	const imports: CredentialImport[] = [...(options.moreCredentials ?? [])];
	if (!hasCredential || !options.apiStateExisted) {
		const user = await sandbox.control.issueRefreshToken(sandbox.username);
		imports.push(
			demoCredential(
				{
					baseUrl: sandbox.url,
					tenancyId: user.tenancy_id,
					username: user.username,
					refreshToken: user.refresh_token,
				},
				options.credentialName,
			),
		);
		// Active workflows were activated at n8n's start with the old credential.
		reactivate = hasCredential;
	}
	const ai = await aiCredentialUpdate(
		stack,
		credentials.map((c) => c.id),
	);
	if (ai) imports.push(ai);
	if (imports.length)
		await step(`demo credentials (${imports.map((c) => c.name).join(', ')})`, () =>
			host.importCredentials(imports),
		);

	const missing: WorkflowJson[] = [];
	for (const workflow of workflows)
		if (!(await client.getWorkflow(String(workflow.id)))) missing.push(workflow);
	if (missing.length) await host.importWorkflows(missing.map((w) => ({ ...w, active: false })));

	for (const workflow of workflows) {
		if (!workflow.active) continue;
		const isNew = missing.includes(workflow);
		if (!isNew && !reactivate) continue;
		await step(`activate "${workflow.name}"`, async () => {
			if (!isNew) await client.deactivate(String(workflow.id)).catch(() => undefined);
			await client.activate(String(workflow.id));
		});
	}
	return { reactivated: reactivate, imported: missing.map((w) => String(w.id)) };
}
