import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { credentialData, type SandboxClient } from '../../sandbox/client';
import { CredentialStore } from './n8n';

/** What a running sandbox offers, whether started in this process or as its own. */
export interface SandboxEndpoint {
	url: string;
	tenancyId: string;
	control: SandboxClient;
}

/**
 * A fresh sandbox API user (its own tokens, rate-limit bucket and subscriptions, so tests do not
 * disturb each other) and the credential row n8n would hold for it before the first exchange.
 */
export async function newSandboxUser(
	sandbox: SandboxEndpoint,
	username: string,
	extra: ICredentialDataDecryptedObject = {},
) {
	const grant = await sandbox.control.issueRefreshToken(username);
	// the address this process reaches the sandbox at (it may differ from the one it announces)
	const data: ICredentialDataDecryptedObject = {
		...credentialData({ ...grant, base_url: sandbox.url, tenancy_id: sandbox.tenancyId }),
		...extra,
	};
	return {
		username: grant.username,
		refreshToken: grant.refresh_token,
		data,
		credentials: new CredentialStore(data),
	};
}
