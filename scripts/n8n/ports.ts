import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';

/** True when nothing listens on `host:port` (we can bind it). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
	return new Promise((resolve) => {
		const server = net.createServer();
		server.unref();
		server.once('error', () => resolve(false));
		server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
	});
}

/** Also checks the wildcard address: n8n listens on `::`/`0.0.0.0`, so both must be free. */
export async function isPortFreeEverywhere(port: number): Promise<boolean> {
	if (!(await isPortFree(port, '127.0.0.1'))) return false;
	return isPortFree(port, '0.0.0.0');
}

const handedOut = new Set<number>();

/**
 * Where `freePort` picks: below the range the OS hands out for port 0 and for outgoing
 * connections (Linux: /proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default). A harness
 * stops and starts n8n processes on the same ports (outages, restarts); an OS-assigned port freed
 * by the stop can meanwhile be handed to any other process on the machine (another n8n stack's
 * task broker: "n8n Task Broker's port ... is already in use", seen beside a fresh clone's tests).
 */
export const HARNESS_PORTS: { low: number; high: number } = (() => {
	let ephemeralStart = 32_768;
	try {
		const [start] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
		if (Number(start) > 21_000) ephemeralStart = Number(start);
	} catch {
		/* not Linux: the default */
	}
	return { low: 20_000, high: ephemeralStart - 1 };
})();

/** A port free on every address, in `HARNESS_PORTS`, never the same one twice in this process. */
export async function freePort(): Promise<number> {
	const { low, high } = HARNESS_PORTS;
	for (let attempt = 0; attempt < 200; attempt++) {
		const port = randomInt(low, high + 1);
		if (handedOut.has(port)) continue;
		if (!(await isPortFreeEverywhere(port))) continue;
		handedOut.add(port);
		return port;
	}
	throw new Error(`no free port found between ${low} and ${high}`);
}

export class PortInUseError extends Error {}

/** Throws a clear message naming the port, what it is for and how to choose another one. */
export async function assertPortsFree(
	ports: Array<{ port: number; what: string; flag: string; env: string }>,
): Promise<void> {
	const taken: string[] = [];
	for (const p of ports) {
		if (!(await isPortFreeEverywhere(p.port))) {
			taken.push(
				`  port ${p.port} (${p.what}) is already in use: stop what uses it (e.g. \`ss -ltnp 'sport = :${p.port}'\`) or choose another with ${p.flag} <port> or ${p.env}=<port>`,
			);
		}
	}
	if (taken.length) throw new PortInUseError(`Port(s) taken:\n${taken.join('\n')}`);
}
