/**
 * The `User-Agent` every request carries (spec: without one the API answers 403).
 *
 * The version is fixed at build time in ./version.ts (written from package.json by
 * scripts/write-version.mjs, which `npm run build` runs): shipped code does not read package.json
 * at run time. A test checks that the committed module matches package.json.
 */
import type { IDataObject } from 'n8n-workflow';

import { PACKAGE_NAME, PACKAGE_VERSION } from './version';

export { PACKAGE_NAME, PACKAGE_VERSION };

/** e.g. `n8n-nodes-learning-platform/1.0.0 (n8n)` */
export const USER_AGENT = `${PACKAGE_NAME}/${PACKAGE_VERSION} (n8n)`;

/**
 * `headers` with the User-Agent: the one place that sets it, for the two kinds of request there
 * are (the API's, through the credential's `authenticate`, and the token exchange, which n8n
 * sends without `authenticate`).
 */
export function withUserAgent(headers: IDataObject = {}): IDataObject {
	return { ...headers, 'User-Agent': USER_AGENT };
}
