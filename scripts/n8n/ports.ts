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

/** A port the OS reports free, never the same one twice in this process. */
export async function freePort(): Promise<number> {
	for (let attempt = 0; attempt < 50; attempt++) {
		const port = await new Promise<number>((resolve, reject) => {
			const server = net.createServer();
			server.unref();
			server.once('error', reject);
			server.listen({ port: 0, host: '127.0.0.1' }, () => {
				const address = server.address() as net.AddressInfo;
				server.close(() => resolve(address.port));
			});
		});
		if (handedOut.has(port)) continue;
		if (!(await isPortFreeEverywhere(port))) continue;
		handedOut.add(port);
		return port;
	}
	throw new Error('no free port found');
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
