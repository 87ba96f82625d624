// Three projects: `sandbox` tests the API simulator itself (its contract with the spec, its
// readings and faults), apart from the package's tests so its counts never pass for the package's;
// `integration` runs the package against the sandbox on loopback through n8n-core's real
// execution code; `e2e` drives a real n8n process with the packed package installed (run it
// with --runInBand: its files share one machine's ports and CPU). scripts/run-tests.js runs all.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.check.json', diagnostics: false }];

/** @type {import('jest').Config} */
module.exports = {
	// A root option: jest ignores testTimeout inside a project. e2e files raise it with jest.setTimeout.
	testTimeout: 60_000,
	projects: [
		{
			displayName: 'sandbox',
			testEnvironment: 'node',
			transform: { '^.+\\.ts$': tsJest },
			testMatch: ['<rootDir>/test/sandbox/**/*.test.ts'],
			setupFiles: ['<rootDir>/test/support/setupClock.ts'],
		},
		{
			displayName: 'integration',
			testEnvironment: 'node',
			transform: { '^.+\\.ts$': tsJest },
			testMatch: ['<rootDir>/test/**/*.test.ts'],
			testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/', '<rootDir>/test/sandbox/'],
			setupFiles: ['<rootDir>/test/support/setupClock.ts'],
		},
		{
			displayName: 'e2e',
			// Node's, keeping n8n's logs when a test failed
			testEnvironment: '<rootDir>/test/e2e/environment.ts',
			// installs (n8n, Node 24, Redis, PostgreSQL) and the package build, once, with no time-out
			globalSetup: '<rootDir>/test/e2e/globalSetup.ts',
			transform: { '^.+\\.ts$': tsJest },
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
		},
	],
};
