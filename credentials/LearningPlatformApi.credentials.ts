import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { apiKeyExpired, exchangeRefreshToken, withUserAgent } from '../nodes/shared/transport';

// API access through an API username and a single-use refresh token, exchanged for a 24-hour API
// key in `preAuthentication`; each exchange also replaces the refresh token, and n8n stores both.
// Tested by the nodes' function test, never a declarative one (it would spend the token from the
// editor). Why: docs/design.md, "Rotation".
export class LearningPlatformApi implements ICredentialType {
	name = 'learningPlatformApi';

	displayName = 'Learning Platform API';

	icon: Icon = { light: 'file:learningPlatform.svg', dark: 'file:learningPlatform.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-learning-platform/n8n-nodes-learning-platform#credentials';

	properties: INodeProperties[] = [
		{
			displayName:
				'The refresh token is single-use. It is exchanged for an API key (and so checked) the first time a workflow uses this credential; n8n then stores the new token it receives. Testing this credential does not spend the token and so does not check it: the test checks the form only, not the connection, the tenancy or the API user.',
			name: 'firstUseNotice',
			type: 'notice',
			default: '',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			placeholder: 'https://lms.example.com',
			required: true,
			description: 'Address of the learning platform, without a path (a trailing slash is ignored)',
		},
		{
			displayName: 'Tenancy ID',
			name: 'tenancyId',
			type: 'string',
			default: '',
			placeholder: 'e.g. acme-learning',
			required: true,
			description: 'Identifier of your tenancy, issued by the platform operator',
		},
		{
			displayName: 'API Username',
			name: 'username',
			type: 'string',
			default: '',
			placeholder: 'e.g. n8n-integration',
			required: true,
			description:
				'The API username issued for this integration. Give each integration its own API user: refresh tokens are single-use, and tools sharing one would invalidate each other.',
		},
		{
			displayName: 'Refresh Token',
			name: 'refreshToken',
			type: 'string',
			typeOptions: { password: true },
			// n8n writes the rotated token back over this field; an expression here would be lost
			noDataExpression: true,
			default: '',
			required: true,
			description:
				'The refresh token issued by the platform operator. It is single-use: n8n exchanges it for an API key on first use and stores the new token it receives. Paste a new one only when n8n reports that the token was rejected.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'hidden',
			typeOptions: { expirable: true, password: true },
			default: '',
		},
		{
			displayName: 'API Key Expires At',
			name: 'apiKeyExpiresAt',
			type: 'hidden',
			// not a secret, but hidden state is never shown anyway (and the linter reads "apiKey")
			typeOptions: { password: true },
			default: '',
		},
	];

	/**
	 * Runs when the stored API key is empty or a request was answered 401 (n8n's rules: nothing
	 * time-based). Returns `{ apiKey, refreshToken, apiKeyExpiresAt }`, which n8n persists.
	 */
	async preAuthentication(this: IHttpRequestHelper, credentials: ICredentialDataDecryptedObject) {
		return await exchangeRefreshToken(this.helpers, credentials);
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const headers = withUserAgent(requestOptions.headers);
		const apiKey = typeof credentials.apiKey === 'string' ? credentials.apiKey : '';
		const expired = apiKeyExpired(credentials, Date.now());

		// Why an expired key is not sent: n8n refreshes a credential only when its expirable
		// property (`apiKey`) is empty or when a request was answered 401; it never looks at
		// `apiKeyExpiresAt`, and `authenticate` can neither refresh nor clear the stored key. So
		// once the key's 24 hours (`expires_in`) are over, the request goes out without a bearer:
		// the API answers 401 without processing it, and n8n's own path then runs
		// `preAuthentication` (which rotates and stores the pair) and repeats the request once
		// with the new key. The same happens if the server expires the key before we do.
		if (apiKey && !expired) {
			headers.Authorization = `Bearer ${apiKey}`;
		} else {
			delete headers.Authorization;
		}
		return { ...requestOptions, headers };
	}
}
