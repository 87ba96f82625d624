/**
 * Command line: `npm run sandbox:api -- [--port 5680] [--host 127.0.0.1] [--state FILE]
 * [--trust-ca FILE]... [--rate-limit 60] [--tenancy ID] [--username NAME] [--feed-delay-ms N]
 * [--allow-http-webhooks] [--delivery-log perDelivery|perAttempt] [--log-order newestFirst|oldestFirst]
 * [--redispatch-entry marks|flagOnly|untouched] [--redispatch-payload original|current]
 * [--no-retry-statuses 404,410] [--no-demo] [--quiet]`
 *
 * Readings of what the spec leaves open (sandbox/README.md, "Webhooks v2" and "Deliveries"); an
 * environment variable sets the same, a flag wins over it:
 * - `--delivery-log` (env LP_DELIVERY_LOG): one log entry per delivery counting `tries` (default
 *   perDelivery), or one entry per attempt;
 * - `--log-order` (env LP_LOG_ORDER): the delivery log newest first (default) or oldest first;
 * - `--redispatch-entry` (env LP_REDISPATCH_ENTRY): a redispatch marks the entry asked for with
 *   the new delivery_id and logs its attempts there (default marks), only flags it and logs the
 *   attempts as new entries (flagOnly), or leaves it alone and logs new entries (untouched);
 * - `--redispatch-payload` (env LP_REDISPATCH_PAYLOAD): a redispatch re-sends the logged payload
 *   (default original) or renders a completion event's payload again from the record (current);
 * - `--no-retry-statuses` (env LP_NO_RETRY_STATUSES): comma-separated HTTP statuses after which
 *   a delivery is not retried (default none).
 *
 * Prints the base URL, tenancy id, username, a live refresh token and the control API prefix,
 * plus one machine-readable line `SANDBOX_READY {...}`; runs until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { CONTROL_PREFIX, startSandbox, type SandboxOptions } from './index';
import { CONFIG_READINGS } from './store';

type ReadingKey = keyof typeof CONFIG_READINGS;

/** The readings' flags and environment variables. */
const READING_SWITCHES: [key: ReadingKey, flag: string, env: string][] = [
	['deliveryLog', '--delivery-log', 'LP_DELIVERY_LOG'],
	['logOrder', '--log-order', 'LP_LOG_ORDER'],
	['redispatchEntry', '--redispatch-entry', 'LP_REDISPATCH_ENTRY'],
	['redispatchPayload', '--redispatch-payload', 'LP_REDISPATCH_PAYLOAD'],
];

function reading<K extends ReadingKey>(
	key: K,
	v: string,
	flag: string,
): (typeof CONFIG_READINGS)[K][number] {
	const allowed: readonly string[] = CONFIG_READINGS[key];
	if (!allowed.includes(v)) throw new Error(`${flag} needs one of ${allowed.join(', ')}, got ${v}`);
	return v as (typeof CONFIG_READINGS)[K][number];
}

/** `404,410` -> [404, 410]; an empty value is the empty list. */
function statuses(v: string, flag: string): number[] {
	const parts = v
		.split(',')
		.map((p) => p.trim())
		.filter((p) => p !== '');
	for (const p of parts)
		if (!/^\d+$/.test(p) || Number(p) < 100 || Number(p) > 599)
			throw new Error(`${flag} needs comma-separated HTTP status codes (100-599), got ${v}`);
	return parts.map(Number);
}

function parse(argv: string[]): SandboxOptions {
	const o: SandboxOptions = { quiet: false };
	const readings = o as Record<ReadingKey, string>;
	for (const [key, , env] of READING_SWITCHES) {
		const v = process.env[env];
		if (v) readings[key] = reading(key, v, env);
	}
	if (process.env.LP_NO_RETRY_STATUSES !== undefined)
		o.deliveryNoRetryStatuses = statuses(process.env.LP_NO_RETRY_STATUSES, 'LP_NO_RETRY_STATUSES');
	const ca: string[] = [];
	const need = (i: number, flag: string) => {
		const v = argv[i + 1];
		if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
		return v;
	};
	const int = (v: string, flag: string) => {
		if (!/^\d+$/.test(v)) throw new Error(`${flag} needs an integer, got ${v}`);
		return Number(v);
	};
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const switched = READING_SWITCHES.find(([, flag]) => flag === a);
		if (switched) {
			readings[switched[0]] = reading(switched[0], need(i++, a), a);
			continue;
		}
		switch (a) {
			case '--port':
				o.port = int(need(i++, a), a);
				break;
			case '--host':
				o.host = need(i++, a);
				break;
			case '--state':
				o.stateFile = need(i++, a);
				break;
			case '--trust-ca':
				ca.push(readFileSync(need(i++, a), 'utf8'));
				break;
			case '--rate-limit':
				o.rateLimitPerMinute = int(need(i++, a), a);
				break;
			case '--tenancy':
				o.tenancyId = need(i++, a);
				break;
			case '--username':
				o.username = need(i++, a);
				break;
			case '--feed-delay-ms':
				o.feedVisibilityDelayMs = int(need(i++, a), a);
				break;
			case '--allow-http-webhooks':
				o.allowHttpWebhookUrls = true;
				break;
			case '--no-retry-statuses':
				o.deliveryNoRetryStatuses = statuses(need(i++, a), a);
				break;
			case '--no-demo':
				o.demoData = false;
				break;
			case '--quiet':
				o.quiet = true;
				break;
			case '--help':
			case '-h':
				process.stdout.write(readFileSync(__filename, 'utf8').split('*/')[0] + '*/\n');
				process.exit(0);
				break;
			default:
				throw new Error(`unknown option ${a} (see --help)`);
		}
	}
	if (ca.length) o.trustedCaPem = ca;
	return o;
}

async function main() {
	const opts = parse(process.argv.slice(2));
	const sb = await startSandbox(opts);
	const lines = [
		`Learning Platform API sandbox listening on ${sb.url}`,
		`  base URL       ${sb.url}`,
		`  tenancy id     ${sb.tenancyId}`,
		`  API username   ${sb.username}`,
		`  refresh token  ${sb.refreshToken}`,
		`  control API    ${sb.url}${CONTROL_PREFIX}/ (e.g. POST ${CONTROL_PREFIX}/refresh-tokens)`,
		opts.stateFile
			? `  state file     ${opts.stateFile}`
			: '  state          in memory (use --state FILE to keep tokens across restarts)',
		`SANDBOX_READY ${JSON.stringify({ url: sb.url, tenancyId: sb.tenancyId, username: sb.username, refreshToken: sb.refreshToken, control: `${sb.url}${CONTROL_PREFIX}` })}`,
	];
	process.stdout.write(`${lines.join('\n')}\n`);
	let stopping = false;
	const stop = (signal: string) => {
		if (stopping) return;
		stopping = true;
		process.stdout.write(`[sandbox] ${signal}: closing\n`);
		sb.close().then(
			() => process.exit(0),
			(e: Error) => {
				process.stderr.write(`[sandbox] close failed: ${e.message}\n`);
				process.exit(1);
			},
		);
	};
	process.on('SIGINT', () => stop('SIGINT'));
	process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: Error) => {
	process.stderr.write(`[sandbox] ${e.message}\n`);
	process.exit(1);
});
