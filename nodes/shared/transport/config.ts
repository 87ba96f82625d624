/**
 * What the package knows about the credential: its connection fields (normalised), the three path
 * roots of the spec, the wording that names the API user, missing fields and key expiry.
 */
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';

export const CREDENTIAL_TYPE = 'learningPlatformApi';

export type ApiRoot = 'report' | 'bookmark' | 'webhook';

export interface ConnectionSettings {
	/** without trailing slash */
	baseUrl: string;
	tenancyId: string;
	username: string;
}

export function connectionSettings(
	data: ICredentialDataDecryptedObject | IDataObject | undefined,
): ConnectionSettings {
	const str = (value: unknown) =>
		typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
	return {
		baseUrl: str(data?.baseUrl).replace(/\/+$/, ''),
		tenancyId: str(data?.tenancyId),
		username: str(data?.username),
	};
}

/** Root URL of one API area (spec "Path roots"). */
export function rootUrl(settings: ConnectionSettings, root: ApiRoot): string {
	const tenancy = encodeURIComponent(settings.tenancyId);
	switch (root) {
		case 'report':
			return `${settings.baseUrl}/local/vendor_tenancymanagement/index.php/api/1.2/tenancies/${tenancy}`;
		case 'bookmark':
			return `${settings.baseUrl}/local/vendor_administration/index.php/api/1.2/bookmarks/${tenancy}`;
		case 'webhook':
			return `${settings.baseUrl}/api/v2/${tenancy}/webhooks`;
	}
}

/** How the API user is named in messages: `API user 'jane' on tenancy '42'`. */
export function apiUserLabel(settings: ConnectionSettings): string {
	return `API user '${settings.username}' on tenancy '${settings.tenancyId}'`;
}

/**
 * A key is treated as expired this long before its stated expiry, so that a request does not
 * leave with a key that lapses on its way (clock differences between n8n and the platform).
 */
export const EXPIRY_SKEW_MS = 60_000;

/** Whether the stored API key is past its expiry (minus the skew); unknown expiry: not expired. */
export function apiKeyExpired(
	data: ICredentialDataDecryptedObject | IDataObject,
	now: number,
): boolean {
	const expiresAt =
		typeof data.apiKeyExpiresAt === 'string' && data.apiKeyExpiresAt
			? Date.parse(data.apiKeyExpiresAt)
			: NaN;
	return Number.isFinite(expiresAt) && expiresAt - EXPIRY_SKEW_MS <= now;
}

/** Key of the client-side rate-limit bucket: one per API user (spec: limit per API key/user). */
export function rateLimitKey(settings: ConnectionSettings): string {
	return `${settings.baseUrl}|${settings.tenancyId}|${settings.username}`;
}

/** The credential's refresh token, trimmed ('' when there is none). */
export function refreshTokenOf(data: ICredentialDataDecryptedObject | IDataObject): string {
	return typeof data.refreshToken === 'string' ? data.refreshToken.trim() : '';
}

/** The credential fields left empty, by their labels in the credential form. */
export function missingCredentialFields(
	data: ICredentialDataDecryptedObject | IDataObject,
): string[] {
	const settings = connectionSettings(data);
	const refreshToken = refreshTokenOf(data);
	const missing: Array<string | false> = [
		!settings.baseUrl && 'Base URL',
		!settings.tenancyId && 'Tenancy ID',
		!settings.username && 'API Username',
		!refreshToken && 'Refresh Token',
	];
	return missing.filter((field): field is string => field !== false);
}
