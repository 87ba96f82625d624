/**
 * One real n8n for the rows that run in it (trigger, concurrency-n8n): started on first use in the
 * row group's process (scripts/n8n: n8n 2.40.7 on Node 24, the package packed and installed as a
 * community package, the sandbox API trusting the TLS front's CA), stopped when the group ends.
 */
import { SandboxClient } from '../../sandbox/client';
import { N8N_VERSION } from '../../scripts/n8n/paths';
import { startStack, type Stack } from '../../scripts/n8n/stack';

let starting: Promise<Stack> | undefined;
let control: SandboxClient | undefined;

export const REAL_N8N_MODE = `real n8n ${N8N_VERSION} (packed package installed as a community package)`;

export function realN8n(): Promise<Stack> {
	starting ??= startStack({ name: 'bench', sandbox: true, sandboxArgs: ['--quiet'] });
	return starting;
}

/** Control client of the stack's sandbox API. */
export async function realN8nSandbox(): Promise<SandboxClient> {
	const stack = await realN8n();
	control ??= new SandboxClient(stack.sandbox!.url);
	return control;
}

export async function stopRealN8n(): Promise<void> {
	if (!starting) return;
	const stack = await starting.catch(() => undefined);
	starting = undefined;
	await control?.close();
	control = undefined;
	await stack?.stop();
}
