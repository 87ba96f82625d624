// Runs once before the e2e files, outside every test's time-out: the installs that a fresh or busy
// machine makes slow (n8n and Node 24 from the npm registry, Redis and PostgreSQL from Debian's
// packages, the package's build and tarball). Each step prints its progress and time, so a slow
// install shows as such instead of as a `beforeAll` time-out. Everything lands in caches that
// the test files' stacks then find ready.
import * as path from 'node:path';
import {
	cacheRoot,
	ensureN8nInstalled,
	ensureQueueServices,
	log,
	packPackageCached,
	step,
	timingReport,
} from '../../scripts/n8n';
import { ensureChromium } from '../../scripts/n8n/browser';

export default async function globalSetup(): Promise<void> {
	const started = Date.now();
	log('e2e global set-up: installs and the package tarball, before any test (no time-out)');
	await step('ensure n8n installed', () => ensureN8nInstalled());
	await step('ensure Redis and PostgreSQL (Debian packages)', () => ensureQueueServices());
	await step('ensure Chromium (Debian package, for the browser test)', () => ensureChromium());
	if (!process.env.LP_E2E_TARBALL)
		await step('build and pack the package', () =>
			packPackageCached(path.join(cacheRoot(), 'packs')),
		);
	log(
		`e2e global set-up done in ${((Date.now() - started) / 1000).toFixed(0)} s\n${timingReport()}`,
	);
}
