// Chromium from Debian's packages for the browser smoke test (test/e2e/browser.test.ts), driven by
// playwright-core. Playwright's own browser download (`npx playwright install`) cannot work on
// these machines (no network but the registries), so the harness installs Debian's `chromium`
// with apt-get when it is missing, like Redis and PostgreSQL in services.ts: idempotent, nothing
// runs when /usr/bin/chromium is there. Needs root (CI and the developers' machines run as root).
import * as fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { aptInstall } from './services';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function findChromium(): string | undefined {
	const fromEnv = process.env.LP_CHROMIUM;
	if (fromEnv && fs.existsSync(fromEnv)) return fromEnv;
	return CANDIDATES.find((candidate) => fs.existsSync(candidate));
}

/** The Chromium binary, installed from Debian's packages (`apt-get install -y chromium`) when missing. */
export async function ensureChromium(): Promise<string> {
	const found = findChromium();
	if (found) return found;
	const aptLog = await aptInstall(['chromium'], 'the browser test');
	const installed = findChromium();
	if (!installed)
		throw new Error(
			`apt-get install chromium finished but no Chromium binary is at ${CANDIDATES.join(' or ')} (log: ${aptLog})`,
		);
	return installed;
}

/**
 * Headless Chromium with a fresh profile (playwright makes a new empty one per launch and removes
 * it on close). The flags keep it off the network (the machine's closed network otherwise refuses
 * its background connections by the dozen) and let it run as root.
 */
export async function launchChromium(): Promise<Browser> {
	const executablePath = await ensureChromium();
	const { chromium } = await import('playwright-core');
	return await chromium.launch({
		executablePath,
		headless: true,
		timeout: 180_000,
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
			'--disable-dev-shm-usage',
		],
	});
}
