/**
 * The credential type's contract (fields, authenticate, the User-Agent version fixed at build time)
 * and the function credential test, which checks the form only and never spends the refresh token.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { CredentialTestContext } from 'n8n-core';
import type { ICredentialTestFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { LearningPlatformApi } from '../../credentials/LearningPlatformApi.credentials';
import { testLearningPlatformCredential } from '../../nodes/shared/transport';
import { USER_AGENT } from '../../nodes/shared/transport/userAgent';
import { NOT_CHECKED_NOTE } from '../../nodes/shared/transport/credentialTest';
import { startSandbox, type SandboxHandle } from '../../sandbox';
import { exchangeElsewhere, newCredential, withPair } from '../transport/helpers';

const repo = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
	name: string;
	version: string;
};
const credential = new LearningPlatformApi();

describe('credential type', () => {
	test('name, display name, fields and hidden rotating state', () => {
		expect(credential.name).toBe('learningPlatformApi');
		expect(credential.displayName).toBe('Learning Platform API');
		expect(credential.documentationUrl).toMatch(/^https:\/\//);
		const byName = Object.fromEntries(credential.properties.map((p) => [p.name, p]));
		expect(Object.keys(byName)).toEqual([
			'firstUseNotice',
			'baseUrl',
			'tenancyId',
			'username',
			'refreshToken',
			'apiKey',
			'apiKeyExpiresAt',
		]);
		// the form says what the test cannot: the token is exchanged (and checked) on first use only
		expect(byName.firstUseNotice).toMatchObject({ type: 'notice', default: '' });
		expect(byName.firstUseNotice.displayName).toMatch(
			/exchanged for an API key \(and so checked\) the first time/,
		);
		expect(byName.firstUseNotice.displayName).toMatch(
			/does not spend the token and so does not check it/,
		);
		expect(byName.tenancyId.placeholder).toBeTruthy();
		expect(byName.username.placeholder).toBeTruthy();
		expect(byName.refreshToken).toMatchObject({
			type: 'string',
			typeOptions: { password: true },
			noDataExpression: true,
		});
		expect(byName.apiKey).toMatchObject({
			type: 'hidden',
			default: '',
			typeOptions: { expirable: true, password: true },
		});
		expect(byName.apiKeyExpiresAt).toMatchObject({ type: 'hidden', default: '' });
		// exactly one expirable property: the one n8n's preAuthentication rule looks at
		expect(credential.properties.filter((p) => p.typeOptions?.expirable)).toHaveLength(1);
		// a declarative test would run preAuthentication from the editor and spend the token
		expect((credential as unknown as Record<string, unknown>).test).toBeUndefined();
		expect(typeof credential.preAuthentication).toBe('function');
		expect(typeof credential.authenticate).toBe('function');
	});

	test('authenticate: bearer API key and the package User-Agent', async () => {
		const options: IHttpRequestOptions = {
			url: 'https://lms.example.com/x',
			headers: { Accept: 'application/json' },
		};
		const out = await credential.authenticate(
			{
				apiKey: 'ak_live_key_value',
				apiKeyExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
			},
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
		const none = await credential.authenticate(
			{ apiKey: '' },
			{ url: 'https://lms.example.com/x' },
		);
		expect(none.headers?.Authorization).toBeUndefined();
		// a key without a recorded expiry (older stored data) is used until the server says 401
		const unknown = await credential.authenticate(
			{ apiKey: 'ak_key_value_1', apiKeyExpiresAt: '' },
			{ url: 'https://x.test' },
		);
		expect(unknown.headers?.Authorization).toBe('Bearer ak_key_value_1');
	});

	test('the User-Agent version is fixed at build time and matches package.json', () => {
		// scripts/write-version.mjs (run by `npm run build`) writes it; a stale committed copy fails here
		const generated = readFileSync(join(repo, 'nodes/shared/transport/version.ts'), 'utf8');
		expect(generated).toContain(`export const PACKAGE_NAME = '${pkg.name}';`);
		expect(generated).toContain(`export const PACKAGE_VERSION = '${pkg.version}';`);
		// shipped code never reads package.json at run time
		const userAgent = readFileSync(join(repo, 'nodes/shared/transport/userAgent.ts'), 'utf8');
		expect(userAgent).not.toMatch(/require\(|package\.json'/);
	});
});

describe('credential test (function, testedBy)', () => {
	let sb: SandboxHandle;
	const context = new CredentialTestContext({} as never) as unknown as ICredentialTestFunctions;
	const test_ = async (data: Record<string, unknown>) =>
		await testLearningPlatformCredential.call(context, {
			id: 'c',
			name: 'LP',
			type: 'learningPlatformApi',
			data: data as never,
		});

	beforeAll(async () => {
		sb = await startSandbox({ quiet: true, demoData: false });
	});
	afterAll(async () => {
		await sb.close();
	});

	/** Requests the sandbox saw from anyone: the test must send none. */
	const requestCount = async () => (await sb.control.requests({})).length;

	test('new credential (no API key): OK for the form only, says what it did not check, sends nothing', async () => {
		const { data, username, refreshToken } = await newCredential(sb, 'ct-new');
		const before = await requestCount();
		const result = await test_(data);
		expect(result.status).toBe('OK');
		expect(result.message).toMatch(/^Only the form was checked/);
		expect(result.message).toContain(NOT_CHECKED_NOTE);
		expect(result.message).not.toMatch(/reachable|successful|works/i);
		expect(result.message).not.toContain(refreshToken);
		expect(await requestCount()).toBe(before);
		expect(await sb.control.auth(username)).toMatchObject({
			refresh_token: refreshToken,
			exchanges: 0,
			failed_exchanges: 0,
		});
	});

	test('a made-up refresh token for a user that does not exist: the result does not claim a connection', async () => {
		const { data } = await newCredential(sb, 'ct-fake');
		const before = await requestCount();
		const result = await test_({
			...data,
			username: 'no-such-user',
			refreshToken: 'made-up-token',
		});
		// the form is complete, so OK; but the message says the token and user were not checked
		expect(result).toEqual({
			status: 'OK',
			message: expect.stringContaining('API Username and refresh token'),
		});
		expect(result.message).toMatch(/Not checked/);
		expect(await requestCount()).toBe(before);
	});

	test('stored live API key: neither used nor spent (no request at all)', async () => {
		const { data, username, refreshToken } = await newCredential(sb, 'ct-live');
		const grant = await exchangeElsewhere(sb, username, refreshToken);
		const before = await requestCount();
		const result = await test_(withPair(data, grant.json));
		expect(result.status).toBe('OK');
		expect(result.message).not.toContain(grant.json.api_key);
		expect(await requestCount()).toBe(before);
		expect((await sb.control.auth(username)).exchanges).toBe(1);
	});

	test('errors: missing fields, malformed URL', async () => {
		const { data } = await newCredential(sb, 'ct-err');
		expect(await test_({ ...data, baseUrl: 'lms.example.com' })).toMatchObject({
			status: 'Error',
			message: expect.stringMatching(/not an http\(s\) URL/),
		});
		expect(await test_({ ...data, baseUrl: 'ftp://lms.example.com' })).toMatchObject({
			status: 'Error',
			message: expect.stringMatching(/not an http\(s\) URL/),
		});
		expect(await test_({ ...data, refreshToken: '' })).toMatchObject({
			status: 'Error',
			message: 'Missing: Refresh Token',
		});
		expect(await test_({ baseUrl: '', tenancyId: ' ', username: '', refreshToken: '' })).toEqual({
			status: 'Error',
			message: 'Missing: Base URL, Tenancy ID, API Username, Refresh Token',
		});
	});
});
