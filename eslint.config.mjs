// Node and credential code is held to n8n's community-node rules (the newer
// @n8n/community-nodes plugin and the classic n8n-nodes-base description rules), package.json
// to the community package rules. The sandbox, scripts and tests are ordinary TypeScript tooling.
import n8nCommunityNodes from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test-results/**', 'bench/results/**', '**/*.js', '**/*.mjs'] },
	{
		files: ['**/*.ts'],
		extends: [tseslint.configs.recommended],
		rules: {
			'@typescript-eslint/no-explicit-any': 'off',
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
		},
	},
	{
		files: ['credentials/**/*.ts', 'nodes/**/*.ts'],
		extends: [n8nCommunityNodes.configs.recommended],
		rules: { 'no-console': 'error' },
	},
	{
		files: ['package.json'],
		plugins: { 'n8n-nodes-base': n8nNodesBase, '@n8n/community-nodes': n8nCommunityNodes.default ?? n8nCommunityNodes },
		rules: {
			...n8nNodesBase.configs.community.rules,
			...Object.fromEntries(
				Object.entries(n8nCommunityNodes.configs.recommended.rules).filter(([name]) =>
					/package|dependencies|lifecycle|overrides|homepage|author|files-array|peer/.test(name),
				),
			),
		},
		languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: ['.json'] } },
	},
	{
		files: ['credentials/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// The newer plugin's rules govern these: it wants documentationUrl as a full URL.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// n8n 2.x writes connections as NodeConnectionTypes.Main, which the newer plugin requires.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
);
