// One real n8n (with the sandbox API and the TLS front) for every part of the e2e suite that needs
// nothing special, so the start-up is paid once: each part is a suite under ./suites, run in this
// order. LP_E2E_SUITES picks some of them (the version matrix does, see scripts/run-tests.js).
// Stacks of their own: rotation (PostgreSQL), queue and webhookScale (queue mode).
import { useStack } from './helpers';
import { actionsSuite } from './suites/actions';
import { agentSuite } from './suites/agent';
import { browserSuite } from './suites/browser';
import { errorsSuite } from './suites/errors';
import { smokeSuite } from './suites/smoke';
import { triggersSuite } from './suites/triggers';

const SUITES = {
	smoke: smokeSuite,
	actions: actionsSuite,
	errors: errorsSuite,
	triggers: triggersSuite,
	agent: agentSuite,
	browser: browserSuite,
};
type SuiteName = keyof typeof SUITES;

function chosenSuites(): SuiteName[] {
	const asked = process.env.LP_E2E_SUITES?.split(',').map((name) => name.trim());
	if (!asked) return Object.keys(SUITES) as SuiteName[];
	const unknown = asked.filter((name) => !(name in SUITES));
	if (unknown.length) throw new Error(`LP_E2E_SUITES names unknown suites: ${unknown.join(', ')}`);
	return asked as SuiteName[];
}

describe('one n8n for the suites', () => {
	const ctx = useStack('e2e-instance');
	for (const name of chosenSuites()) SUITES[name](ctx);
});
