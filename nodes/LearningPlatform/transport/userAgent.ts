/**
 * The `User-Agent` every request carries (spec: without one the API answers 403).
 *
 * The version comes from the package's own package.json, read when this module loads. The
 * relative depth differs between the TypeScript source (nodes/LearningPlatform/transport/, run by
 * ts-jest) and the compiled file inside an installed package (dist/nodes/LearningPlatform/transport/,
 * with dist/ next to package.json), so both depths are tried and the first file that names this
 * package wins. Only relative requires: the package ships no runtime dependencies.
 */

export const PACKAGE_NAME = 'n8n-nodes-learning-platform';

interface PackageJson {
	name?: string;
	version?: string;
}

function readPackageVersion(): string {
	// `require`, not `import`: an imported package.json would be compiled into dist/ as a second
	// package.json (and pinned at build time to a path one level off from the installed one).
	const candidates: Array<() => PackageJson> = [
		// dist/nodes/LearningPlatform/transport/userAgent.js -> <package>/package.json
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		() => require('../../../../package.json') as PackageJson,
		// nodes/LearningPlatform/transport/userAgent.ts (source, tests) -> <repo>/package.json
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		() => require('../../../package.json') as PackageJson,
	];
	for (const load of candidates) {
		try {
			const pkg = load();
			if (pkg?.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
		} catch {
			// not at this depth; try the next one
		}
	}
	return '0.0.0';
}

export const PACKAGE_VERSION = readPackageVersion();

/** e.g. `n8n-nodes-learning-platform/0.1.0 (n8n)` */
export const USER_AGENT = `${PACKAGE_NAME}/${PACKAGE_VERSION} (n8n)`;
