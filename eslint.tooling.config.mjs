// ESLint for the code that is NOT shipped: the sandbox API simulator, scripts, the benchmark and
// the tests (run with `eslint -c eslint.tooling.config.mjs .`, part of `npm run lint`). It is plain
// TypeScript/Node tooling, so n8n's community-node rules (no timers, no `process`, no Node
// imports) do not apply here. The shipped code (nodes/, credentials/, package.json) is linted by
// `n8n-node lint` with n8n's unchanged default eslint.config.mjs (scripts/lint-shipped.mjs).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{
		ignores: [
			'dist/**',
			'node_modules/**',
			'coverage/**',
			'test-results/**',
			'bench/results/**',
			// shipped code: n8n-node lint
			'nodes/**',
			'credentials/**',
		],
	},
	{
		files: ['**/*.ts'],
		extends: [tseslint.configs.recommended],
		rules: {
			// tests and the simulator handle arbitrary JSON from the API under test
			'@typescript-eslint/no-explicit-any': 'off',
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
			],
		},
	},
	{
		files: ['**/*.{js,mjs,cjs}'],
		extends: [js.configs.recommended],
		languageOptions: { globals: { ...globals.node } },
	},
	{
		files: ['**/*.{js,cjs}'],
		languageOptions: { sourceType: 'commonjs' },
	},
);
