/**
 * The harness's ports (`freePort`): n8n processes are stopped and started again on the ports they
 * were given, so those come from below the range the OS hands out to anyone asking for port 0.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';

import { freePort } from '../../scripts/n8n/ports';

const ephemeralStart = (() => {
	try {
		return Number(
			fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
		);
	} catch {
		return 32_768;
	}
})();

test('hands out distinct ports below the ephemeral range, each free to listen on', async () => {
	const ports: number[] = [];
	for (let i = 0; i < 20; i++) ports.push(await freePort());
	expect(new Set(ports).size).toBe(ports.length);
	for (const port of ports) {
		expect(port).toBeGreaterThanOrEqual(20_000);
		expect(port).toBeLessThan(ephemeralStart);
		const server = net.createServer();
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen({ port, host: '0.0.0.0' }, resolve);
		});
		await new Promise((resolve) => server.close(resolve));
	}
});
