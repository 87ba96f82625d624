// The demo content of `npm run sandbox`: `demo/credential.template.json` (filled with a sandbox
// user) and `demo/workflows/*.json` (imported with n8n's CLI, activated when `"active": true`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CredentialImport, WorkflowJson } from './n8n';
import { REPO_ROOT } from './paths';

export const DEMO_DIR = path.join(REPO_ROOT, 'demo');

export interface DemoCredentialValues {
	baseUrl: string;
	tenancyId: string;
	username: string;
	refreshToken: string;
}

export function demoCredential(values: DemoCredentialValues): CredentialImport {
	const template = fs.readFileSync(path.join(DEMO_DIR, 'credential.template.json'), 'utf8');
	const filled = template.replace(/\{\{(\w+)\}\}/g, (_m, key: keyof DemoCredentialValues) => {
		const value = values[key];
		if (value === undefined) throw new Error(`credential template: no value for {{${key}}}`);
		return JSON.stringify(String(value)).slice(1, -1);
	});
	return JSON.parse(filled) as CredentialImport;
}

export function demoWorkflows(): WorkflowJson[] {
	const dir = path.join(DEMO_DIR, 'workflows');
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as WorkflowJson);
}

/** The webhook trigger's production URL in a workflow (n8n: `<WEBHOOK_URL>webhook/<webhookId>/<path>`). */
export function triggerWebhookUrl(webhookBaseUrl: string, workflow: WorkflowJson, path = 'webhook'): string | undefined {
	const node = workflow.nodes.find((n) => typeof n.webhookId === 'string' && String(n.type).endsWith('.learningPlatformTrigger'));
	return node ? `${webhookBaseUrl.replace(/\/?$/, '/')}webhook/${String(node.webhookId)}/${path}` : undefined;
}
