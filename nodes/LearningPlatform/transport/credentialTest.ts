/**
 * The credential test the editor runs (wired by the node as
 * `methods.credentialTest.learningPlatformApiTest`, `testedBy: 'learningPlatformApiTest'`).
 *
 * It NEVER exchanges the refresh token. Measured in n8n 2.40.7: a declarative `test` on a new
 * credential (empty API key) runs `preAuthentication`, which exchanges the token and stores the new
 * pair; but the editor's form still holds the typed (now spent) token, and saving the form again
 * writes it back: the credential is dead. A function test never runs `preAuthentication`.
 *
 * So the test checks that the API answers at the configured base URL and tenancy, and, when a live
 * API key is stored, that the key works on a cheap read (`GET {webhook_root}/events`). Without a
 * live key it reports success with the note that the refresh token is exchanged on first use.
 */
import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { connectionSettings, rootUrl } from './config';
import { inspectFailure, scrubSecrets } from './errors';
import { USER_AGENT } from './userAgent';

const TEST_TIMEOUT_MS = 20_000;
/** An API key this close to its expiry is treated as expired. */
const EXPIRY_SKEW_MS = 60_000;

const NOT_SPENT_NOTE =
	'The refresh token was not checked: it is single-use, so the test does not spend it. ' +
	'It is exchanged for an API key on first use, and n8n stores the new pair.';

export async function testLearningPlatformCredential(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const data = (credential?.data ?? {}) as IDataObject;
	const settings = connectionSettings(data);
	const secrets = [data.refreshToken, data.apiKey].filter((v): v is string => typeof v === 'string');
	const result = (status: 'OK' | 'Error', message: string): INodeCredentialTestResult => ({
		status,
		message: scrubSecrets(message, secrets),
	});

	const missing = [
		!settings.baseUrl && 'Base URL',
		!settings.tenancyId && 'Tenancy ID',
		!settings.username && 'API Username',
		!(typeof data.refreshToken === 'string' && data.refreshToken.trim()) && 'Refresh Token',
	].filter(Boolean);
	if (missing.length) return result('Error', `Missing: ${missing.join(', ')}`);
	try {
		const parsed = new URL(settings.baseUrl);
		if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('protocol');
	} catch {
		return result('Error', `The Base URL "${settings.baseUrl}" is not an http(s) URL, e.g. https://lms.example.com`);
	}

	const apiKey = typeof data.apiKey === 'string' ? data.apiKey : '';
	const expiresAt = typeof data.apiKeyExpiresAt === 'string' ? Date.parse(data.apiKeyExpiresAt) : NaN;
	const liveKey = apiKey !== '' && (!Number.isFinite(expiresAt) || expiresAt - EXPIRY_SKEW_MS > Date.now());

	const headers: IDataObject = { Accept: 'application/json', 'User-Agent': USER_AGENT };
	if (liveKey) headers.Authorization = `Bearer ${apiKey}`;

	let statusCode: number;
	try {
		// ICredentialTestFunctions offers only the legacy `request` helper (n8n 2.x's
		// CredentialTestContext has no httpRequest); no credential is attached to it.
		// eslint-disable-next-line @n8n/community-nodes/no-deprecated-workflow-functions
		const response = (await this.helpers.request({
			method: 'GET',
			uri: `${rootUrl(settings, 'webhook')}/events`,
			headers,
			json: true,
			resolveWithFullResponse: true,
			simple: false,
			timeout: TEST_TIMEOUT_MS,
		})) as { statusCode: number };
		statusCode = Number(response?.statusCode);
	} catch (error) {
		const facts = inspectFailure(error);
		if (facts.status === undefined) {
			return result(
				'Error',
				`Could not reach the learning platform at ${settings.baseUrl}${facts.code ? ` (${facts.code})` : ''}. Check the Base URL.`,
			);
		}
		statusCode = facts.status;
	}

	const where = `API user '${settings.username}' on tenancy '${settings.tenancyId}'`;
	if (statusCode >= 200 && statusCode < 300) {
		return liveKey
			? result('OK', `Connection successful: the stored API key works for ${where}.`)
			: result('OK', `The learning platform at ${settings.baseUrl} is reachable. ${NOT_SPENT_NOTE}`);
	}
	if (statusCode === 401) {
		return liveKey
			? result(
					'OK',
					`The learning platform is reachable, but the stored API key for ${where} is no longer accepted (it was replaced or expired); a new one will be obtained with the refresh token on first use. ${NOT_SPENT_NOTE}`,
				)
			: result('OK', `The learning platform at ${settings.baseUrl} is reachable. ${NOT_SPENT_NOTE}`);
	}
	if (statusCode === 429) {
		return result('OK', `The learning platform is reachable (it is rate-limiting ${where} right now). ${NOT_SPENT_NOTE}`);
	}
	if (statusCode === 404) {
		return result('Error', `The learning platform answered 404: check the Base URL and the Tenancy ID ('${settings.tenancyId}').`);
	}
	if (statusCode === 403) {
		return result('Error', `The learning platform refused the request (403 Forbidden) for ${where}.`);
	}
	return result('Error', `The learning platform at ${settings.baseUrl} answered HTTP ${statusCode}. Try again later.`);
}
