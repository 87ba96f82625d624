/**
 * The credential type's contract (fields, authenticate, User-Agent from the built package) and the
 * function credential test, which must never spend the refresh token.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { CredentialTestContext } from 'n8n-core';
import type { ICredentialTestFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { LearningPlatformApi } from '../../credentials/LearningPlatformApi.credentials';
import { testLearningPlatformCredential, USER_AGENT } from '../../nodes/LearningPlatform/transport';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { exchangeElsewhere, newCredential, withPair } from '../transport/helpers';

const repo = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { name: string; version: string };
const credential = new LearningPlatformApi();

describe('credential type', () => {
	test('name, display name, fields and hidden rotating state', () => {
		expect(credential.name).toBe('learningPlatformApi');
		expect(credential.displayName).toBe('Learning Platform API');
		expect(credential.documentationUrl).toMatch(/^https:\/\//);
		const byName = Object.fromEntries(credential.properties.map((p) => [p.name, p]));
		expect(Object.keys(byName)).toEqual(['baseUrl', 'tenancyId', 'username', 'refreshToken', 'apiKey', 'apiKeyExpiresAt']);
		expect(byName.refreshToken).toMatchObject({ type: 'string', typeOptions: { password: true }, noDataExpression: true });
		expect(byName.apiKey).toMatchObject({ type: 'hidden', default: '', typeOptions: { expirable: true, password: true } });
		expect(byName.apiKeyExpiresAt).toMatchObject({ type: 'hidden', default: '' });
		// exactly one expirable property: the one n8n's preAuthentication rule looks at
		expect(credential.properties.filter((p) => p.typeOptions?.expirable)).toHaveLength(1);
		// a declarative test would run preAuthentication from the editor and spend the token
		expect((credential as unknown as Record<string, unknown>).test).toBeUndefined();
		expect(typeof credential.preAuthentication).toBe('function');
		expect(typeof credential.authenticate).toBe('function');
	});

	test('authenticate: bearer API key and the package User-Agent', async () => {
		const options: IHttpRequestOptions = { url: 'https://lms.example.com/x', headers: { Accept: 'application/json' } };
		const out = await credential.authenticate(
			{ apiKey: 'ak_live_key_value', apiKeyExpiresAt: new Date(Date.now() + 3_600_000).toISOString() },
			options,
		);
		expect(out.headers).toEqual({
			Accept: 'application/json',
			Authorization: 'Bearer ak_live_key_value',
			'User-Agent': `n8n-nodes-learning-platform/${pkg.version} (n8n)`,
		});
		expect(USER_AGENT).toBe(`n8n-nodes-learning-platform/${pkg.version} (n8n)`);
	});

	test('authenticate: an API key past its expiry (or without one) is not sent, so the 401 drives the refresh', async () => {
		const past = await credential.authenticate(
			{ apiKey: 'ak_old_key_value', apiKeyExpiresAt: new Date(Date.now() - 1000).toISOString() },
			{ url: 'https://lms.example.com/x', headers: { Authorization: 'Bearer something-else' } },
		);
		expect(past.headers?.Authorization).toBeUndefined();
		expect(past.headers?.['User-Agent']).toBe(USER_AGENT);
		const none = await credential.authenticate({ apiKey: '' }, { url: 'https://lms.example.com/x' });
		expect(none.headers?.Authorization).toBeUndefined();
		// a key without a recorded expiry (older stored data) is used until the server says 401
		const unknown = await credential.authenticate({ apiKey: 'ak_key_value_1', apiKeyExpiresAt: '' }, { url: 'https://x.test' });
		expect(unknown.headers?.Authorization).toBe('Bearer ak_key_value_1');
	});

	test('the compiled package reads its version from the package.json next to dist/', () => {
		const dir = mkdtempSync(join(tmpdir(), 'lp-dist-'));
		try {
			execFileSync(
				process.execPath,
				[
					join(repo, 'node_modules/typescript/bin/tsc'),
					'--outDir', join(dir, 'dist'),
					'--rootDir', repo,
					'--module', 'commonjs', '--target', 'es2022', '--esModuleInterop', '--skipLibCheck',
					'--resolveJsonModule', '--moduleResolution', 'node',
					join(repo, 'credentials/LearningPlatformApi.credentials.ts'),
				],
				{ stdio: 'pipe' },
			);
			writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, version: '9.8.7-installed' }));
			symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
			const script = `const { LearningPlatformApi } = require(${JSON.stringify(join(dir, 'dist/credentials/LearningPlatformApi.credentials.js'))});
				new LearningPlatformApi().authenticate({ apiKey: 'k' }, { url: 'https://x.test' }).then((o) => console.log(o.headers['User-Agent']));`;
			const ua = execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' }).trim();
			expect(ua).toBe('n8n-nodes-learning-platform/9.8.7-installed (n8n)');
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	}, 60_000);
});

describe('credential test (function, testedBy)', () => {
	let sb: SandboxHandle;
	const context = new CredentialTestContext({} as never) as unknown as ICredentialTestFunctions;
	const test_ = async (data: Record<string, unknown>) =>
		await testLearningPlatformCredential.call(context, { id: 'c', name: 'LP', type: 'learningPlatformApi', data: data as never });

	beforeAll(async () => {
		sb = await startSandbox({ quiet: true, demoData: false });
	});
	afterAll(async () => {
		await sb.close();
	});

	test('new credential (no API key): reachable, reports that the token is exchanged on first use, spends nothing', async () => {
		const { data, username, refreshToken } = await newCredential(sb, 'ct-new');
		const result = await test_(data);
		expect(result.status).toBe('OK');
		expect(result.message).toMatch(/reachable/);
		expect(result.message).toMatch(/exchanged for an API key on first use/);
		expect(result.message).not.toContain(refreshToken);
		const live = await sb.control.auth(username);
		expect(live).toMatchObject({ refresh_token: refreshToken, exchanges: 0, failed_exchanges: 0 });
		const requests = await sb.control.requests({});
		expect(requests.filter((r) => r.path.endsWith('/apikeys'))).toHaveLength(0);
	});

	test('stored live API key: used on a cheap read, no exchange', async () => {
		const { data, username, refreshToken } = await newCredential(sb, 'ct-live');
		const grant = await exchangeElsewhere(sb, username, refreshToken);
		const stored = withPair(data, grant.json);
		const result = await test_(stored);
		expect(result).toEqual({ status: 'OK', message: expect.stringMatching(/stored API key works/) });
		expect(result.message).not.toContain(grant.json.api_key);
		expect((await sb.control.auth(username)).exchanges).toBe(1);
		const reads = (await sb.control.requests({ username })).filter((r) => r.path.endsWith('/events'));
		expect(reads).toEqual([expect.objectContaining({ authorization_kind: 'api_key', status: 200, user_agent: USER_AGENT })]);
	});

	test('stored key no longer accepted: still OK (token untouched) with an explanation', async () => {
		const { data, username, refreshToken } = await newCredential(sb, 'ct-dead');
		const grant = await exchangeElsewhere(sb, username, refreshToken);
		await exchangeElsewhere(sb, username, grant.json.refresh_token); // rotated again elsewhere
		const result = await test_({ ...data, refreshToken: grant.json.refresh_token, apiKey: grant.json.api_key });
		expect(result.status).toBe('OK');
		expect(result.message).toMatch(/no longer accepted/);
		expect((await sb.control.auth(username)).exchanges).toBe(2);
	});

	test('errors: unreachable server, malformed URL, missing fields', async () => {
		const { data } = await newCredential(sb, 'ct-err');
		const closed = await startSandbox({ quiet: true, demoData: false });
		const deadUrl = closed.url;
		await closed.close();
		const unreachable = await test_({ ...data, baseUrl: deadUrl });
		expect(unreachable.status).toBe('Error');
		expect(unreachable.message).toMatch(/Could not reach the learning platform/);
		expect(await test_({ ...data, baseUrl: 'lms.example.com' })).toMatchObject({ status: 'Error', message: expect.stringMatching(/not an http\(s\) URL/) });
		expect(await test_({ ...data, refreshToken: '' })).toMatchObject({ status: 'Error', message: 'Missing: Refresh Token' });
		const wrongPath = await test_({ ...data, baseUrl: `${sb.url}/some/prefix` });
		expect(wrongPath).toMatchObject({ status: 'Error', message: expect.stringMatching(/404/) });
	});
});
