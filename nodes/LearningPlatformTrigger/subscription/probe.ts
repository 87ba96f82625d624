// Whether the trigger's own webhook answers as active: an unsigned POST to its URL. While the
// workflow is active the trigger answers 401 (no execution starts); n8n says 404 before
// activation has finished and after deactivation. docs/design.md, "Missed deliveries".
import type { IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { clock } from '../../shared/transport';

/** How long activation's run waits for the webhook to answer before redispatching anyway. */
const WEBHOOK_LIVE_WAIT_MS = 120_000;
const PROBE_INTERVAL_MS = 2_000;
/** Probes in a row without any answer after which the URL is taken as unreachable from n8n. */
const UNREACHABLE_PROBES = 3;

type Context = IHookFunctions | IWebhookFunctions;

/** What n8n answers an unsigned probe of the webhook at `url`: a status, or undefined without an answer. */
export async function probeWebhook(this: Context, url: string): Promise<number | undefined> {
	try {
		const response = (await this.helpers.httpRequest({
			method: 'POST',
			url,
			body: {},
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			// n8n's own public URL, which n8n may reach through a TLS front whose certificate it does
			// not trust; the probe sends no secret and reads only the status code
			skipSslCertificateValidation: true,
			timeout: 10_000,
		})) as { statusCode?: number };
		return response.statusCode;
	} catch {
		return undefined;
	}
}

/**
 * Waits until the webhook answers, so that what is redispatched is not refused by n8n itself.
 * Gives up after a while, or at once when n8n cannot reach its own public URL.
 */
export async function webhookLive(this: Context, url: string): Promise<void> {
	const deadline = clock().now() + WEBHOOK_LIVE_WAIT_MS;
	for (let unreachable = 0; unreachable < UNREACHABLE_PROBES && clock().now() < deadline; ) {
		const status = await probeWebhook.call(this, url);
		if (status !== undefined && status !== 404) return;
		unreachable = status === undefined ? unreachable + 1 : 0;
		await clock().sleep(PROBE_INTERVAL_MS);
	}
}
