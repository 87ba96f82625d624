/**
 * The credential test the editor runs (wired by the node as
 * `methods.credentialTest.learningPlatformApiTest`, `testedBy: 'learningPlatformApiTest'`).
 *
 * It checks the form only and sends NO request. Why:
 * - It must never exchange the refresh token. Measured in n8n 2.40.7: a declarative `test` on a new
 *   credential (empty API key) runs `preAuthentication`, which exchanges the token and stores the new
 *   pair; but the editor's form still holds the typed (now spent) token, and saving the form again
 *   writes it back: the credential is dead. n8n's credential tester runs a declarative test through
 *   `httpRequestWithAuthentication`, so any declarative test of this credential would run
 *   `preAuthentication` whenever the stored key is empty or answered 401.
 * - A function test never runs `preAuthentication`, but the only HTTP helper n8n gives it
 *   (`ICredentialTestFunctions.helpers`, n8n 1.x and 2.x) is the deprecated `request`, which n8n's
 *   community-package scanner rejects. `helpers.httpRequest` is not offered there.
 *
 * So the result claims exactly what was checked: the fields are filled in and the Base URL is an
 * http(s) address. Whether the platform answers, and whether the tenancy, the API user and the
 * refresh token are valid, is found out on first use, when a node exchanges the refresh token
 * (the credential form says so in a notice).
 */
import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { connectionSettings, missingCredentialFields } from './config';

/** What the OK result says was not checked; the credential form's notice says the same. */
export const NOT_CHECKED_NOTE =
	'Not checked: whether the platform answers at this Base URL, and the Tenancy ID, API Username and refresh token. ' +
	'The refresh token is single-use, so testing does not spend it: it is exchanged for an API key, and so checked, ' +
	'the first time a workflow uses this credential.';

export async function testLearningPlatformCredential(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const data = (credential?.data ?? {}) as IDataObject;
	const settings = connectionSettings(data);

	const missing = missingCredentialFields(data);
	if (missing.length) return { status: 'Error', message: `Missing: ${missing.join(', ')}` };

	let parsed: URL | undefined;
	try {
		parsed = new URL(settings.baseUrl);
	} catch {
		parsed = undefined;
	}
	if (
		!parsed ||
		(parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
		!parsed.hostname
	) {
		return {
			status: 'Error',
			message: `The Base URL "${settings.baseUrl}" is not an http(s) URL, e.g. https://lms.example.com`,
		};
	}

	return {
		status: 'OK',
		message: `Only the form was checked: all fields are filled in and the Base URL is an http(s) address. ${NOT_CHECKED_NOTE}`,
	};
}
