/**
 * Command line: `npm run sandbox:api -- [--port 5680] [--host 127.0.0.1] [--state FILE]
 * [--trust-ca FILE]... [--rate-limit 60] [--tenancy ID] [--username NAME] [--feed-delay-ms N]
 * [--allow-http-webhooks] [--delivery-log perDelivery|perAttempt] [--no-demo] [--quiet]`
 *
 * `--delivery-log` (env LP_DELIVERY_LOG): one log entry per delivery counting `tries` (default), or
 * one entry per attempt (sandbox/README.md, "Delivery log").
 *
 * Prints the base URL, tenancy id, username, a live refresh token and the control API prefix,
 * plus one machine-readable line `SANDBOX_READY {...}`; runs until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { CONTROL_PREFIX, startSandbox, type SandboxOptions } from './index';
import { DELIVERY_LOG_READINGS, type DeliveryLogReading } from './store';

function deliveryLogReading(v: string, flag: string): DeliveryLogReading {
	if (!DELIVERY_LOG_READINGS.includes(v as DeliveryLogReading))
		throw new Error(`${flag} needs one of ${DELIVERY_LOG_READINGS.join(', ')}, got ${v}`);
	return v as DeliveryLogReading;
}

function parse(argv: string[]): SandboxOptions {
	const o: SandboxOptions = { quiet: false };
	if (process.env.LP_DELIVERY_LOG)
		o.deliveryLog = deliveryLogReading(process.env.LP_DELIVERY_LOG, 'LP_DELIVERY_LOG');
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
			case '--delivery-log':
				o.deliveryLog = deliveryLogReading(need(i++, a), a);
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
