// The e2e files' test environment: Node's, noting in the file's globals when a test or a hook
// failed, so that the harness keeps that file's work folders (n8n's logs) for the post-mortem
// (scripts/n8n/stack.ts). A fresh clone's CI run otherwise deleted the logs of a failure it could
// not repeat (n8n 2.41.1 left a publication in progress for 10 minutes, 2026-11-29).
import type { Circus } from '@jest/types';
import NodeEnvironment from 'jest-environment-node';

export default class E2eEnvironment extends NodeEnvironment {
	handleTestEvent(event: Circus.Event): void {
		if (event.name === 'test_fn_failure' || event.name === 'hook_failure')
			this.global.lpTestFailed = true;
	}
}
