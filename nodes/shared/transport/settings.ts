// Connection settings per node run: base URL, tenancy and username do not change during a run
// (rotation changes only the tokens, which n8n reads itself), and n8n's `getCredentials` is a
// database read and a decryption. The run's context object is the cache key.
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import {
	CREDENTIAL_TYPE,
	connectionSettings,
	rateLimitKey,
	type ConnectionSettings,
} from './config';
import type { LearningPlatformContext } from './context';
import { keyUse, type KeyUse } from './rateLimiter';
import { scrubSecrets } from './secrets';
import { apiFailure, incompleteConnection, noCredential } from './wording';

const settingsByRun = new WeakMap<object, ConnectionSettings>();

export async function storedCredential(
	ctx: LearningPlatformContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	return await ctx.getCredentials(CREDENTIAL_TYPE, itemIndex);
}

export async function connectionFor(
	ctx: LearningPlatformContext,
	itemIndex?: number,
): Promise<ConnectionSettings> {
	const cached = settingsByRun.get(ctx);
	if (cached) return cached;
	let data: ICredentialDataDecryptedObject;
	try {
		data = await storedCredential(ctx, itemIndex);
	} catch (error) {
		const reason = scrubSecrets((error as Error)?.message ?? '');
		throw apiFailure(ctx.getNode(), noCredential(reason), { itemIndex });
	}
	const settings = connectionSettings(data);
	if (!settings.baseUrl || !settings.tenancyId) {
		throw apiFailure(ctx.getNode(), incompleteConnection, { itemIndex });
	}
	settingsByRun.set(ctx, settings);
	return settings;
}

/**
 * The window of the API key the run's credential names, as this process sees it (rateLimiter.ts
 * `keyUse`): for callers that must leave most of the key to others (recovery's share).
 */
export async function keyUseOf(ctx: LearningPlatformContext): Promise<KeyUse> {
	return keyUse(rateLimitKey(await connectionFor(ctx)));
}
