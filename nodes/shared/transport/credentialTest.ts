// The credential test the editor runs (`testedBy: 'learningPlatformApiTest'`). It checks the form
// only and sends no request: a test must never exchange the single-use refresh token, and the
// only HTTP helper n8n gives a function test is one its scanner rejects. docs/design.md, "Rotation".
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
