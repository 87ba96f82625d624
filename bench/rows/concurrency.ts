/**
 * Row 5, concurrency: 50 executions of the Learning Platform node (Completion → Get Many, Limit 1)
 * started at the same moment in one process, all on one credential whose API key has expired.
 *
 * Set-up, as a long-running n8n would be after 24 hours: the credential was used (the key was
 * exchanged and stored, and the process' rate-limit bucket knows the server's limit), then the key
 * expired: the sandbox expires it (its requests answer 401) and the stored `apiKeyExpiresAt` is
 * moved into the past. Then 50 executions start together.
 *
 * - exchanges = refresh-token exchanges the sandbox counted for the API user during the 50
 *   executions (target 1 for this one process);
 * - failed executions (target 0); the credential still works afterwards (one more execution).
 *
 * The credential store plays n8n's database row (test/support/n8n.ts mirrors n8n 2.40.7's
 * CredentialsHelper: reload on every request, `preAuthentication` on an empty key or a 401,
 * persist what it returns).
 */
import { executeNode } from '../../test/support/n8n';
import {
	errorText,
	failedResult,
	metric,
	newApiUser,
	progress,
	startBenchSandbox,
	type RowResult,
} from '../lib/common';
import { LearningPlatform } from '../lib/nodes';

const EXECUTIONS = 50;
const RATE_LIMIT = 600;

export async function run(): Promise<RowResult> {
	const t0 = Date.now();
	const title = `Concurrency: ${EXECUTIONS} executions, one credential, expired key`;
	const sandbox = await startBenchSandbox({
		rateLimitPerMinute: RATE_LIMIT,
		demo: true,
		logName: 'concurrency',
	});
	try {
		const { username, credentials } = await newApiUser(sandbox, 'concurrency');
		const nodeType = new LearningPlatform();
		const parameters = { resource: 'completion', operation: 'getMany', returnAll: false, limit: 1 };

		// the credential in use: key exchanged and stored, bucket warm
		const warm = await executeNode({ nodeType, parameters, credentials });
		if (warm.error) throw warm.error;
		const before = await sandbox.control.auth(username);

		// 24 hours later
		await sandbox.control.expireApiKey(username);
		credentials.replace({
			...credentials.data,
			apiKeyExpiresAt: new Date(Date.now() - 3_600_000).toISOString(),
		});
		await sandbox.control.clearRequests();
		const writesBefore = credentials.writes.length;

		progress(`concurrency: ${EXECUTIONS} executions at once ...`);
		const s0 = performance.now();
		const results = await Promise.all(
			Array.from({ length: EXECUTIONS }, () => executeNode({ nodeType, parameters, credentials })),
		);
		const ms = performance.now() - s0;
		const after = await sandbox.control.auth(username);
		const exchanges = after.exchanges - before.exchanges;
		const failedExchanges = after.failed_exchanges - before.failed_exchanges;
		const failed = results.filter((r) => r.error || (r.output[0]?.length ?? 0) !== 1);
		// requests without a bearer are not attributed to a user in the sandbox log: take them all
		// (this sandbox serves this row only)
		const log = await sandbox.control.requests();
		const unauthorized = log.filter((r) => r.status === 401).length;
		const rateLimited = log.filter((r) => r.status === 429).length;
		const writes = credentials.writes.length - writesBefore;
		const firstFailure = failed[0]?.error ? errorText(failed[0].error) : undefined;
		progress(
			`concurrency: ${exchanges} exchanges, ${failed.length} failed, ${unauthorized} answers 401, ${writes} credential writes, ${Math.round(ms)} ms`,
		);

		// the stored credential still works
		const check = await executeNode({ nodeType, parameters, credentials });
		const stillWorks = !check.error && (check.output[0]?.length ?? 0) === 1;

		return {
			id: 'concurrency',
			title,
			mode: 'in-process (n8n-core WorkflowExecute, credentials helper mirroring n8n 2.40.7)',
			settings: {
				executions: EXECUTIONS,
				operation: 'completion/getMany limit 1',
				sandboxRateLimitPerMinute: RATE_LIMIT,
				expiry: 'server-side expire-api-key + stored apiKeyExpiresAt in the past',
			},
			metrics: [
				metric('exchanges (one process)', exchanges, String(exchanges), {
					text: '1',
					pass: exchanges === 1,
				}),
				metric(
					'failed executions',
					failed.length,
					firstFailure
						? `${failed.length} (first: ${firstFailure.slice(0, 120)})`
						: String(failed.length),
					{ text: '0', pass: failed.length === 0 },
				),
				metric('refused exchanges (401 on refresh)', failedExchanges, String(failedExchanges), {
					text: '0',
					pass: failedExchanges === 0,
				}),
				metric(
					'credential still works afterwards',
					stillWorks ? 'yes' : 'no',
					stillWorks ? 'yes' : `no: ${check.error ? errorText(check.error) : 'no output'}`,
					{ text: 'yes', pass: stillWorks },
				),
				metric('API requests answered 401', unauthorized, String(unauthorized)),
				metric('API requests in all', log.length, String(log.length)),
				metric('credential writes (n8n persists)', writes, String(writes)),
				metric('429 answers', rateLimited, String(rateLimited)),
				metric('wall time of the 50', ms, `${Math.round(ms)} ms`),
			],
			notes: [
				`sandbox rate limit ${RATE_LIMIT}/min so that pacing plays no part; the bucket already knew the limit (warm process), so all ${EXECUTIONS} requests go out at once`,
				'an expired key is not sent (credential authenticate): the request goes without a bearer, the API answers 401 and n8n runs preAuthentication, then repeats the request once',
				'every execution that saw the 401 gets the pair of the single shared exchange and n8n persists it: one write per such execution, all with the same values',
			],
			durationMs: Date.now() - t0,
		};
	} catch (error) {
		return failedResult({ id: 'concurrency', title, mode: 'in-process' }, t0, error);
	} finally {
		await sandbox.stop();
	}
}
