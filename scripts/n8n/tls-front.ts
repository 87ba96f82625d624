// The TLS front: the learning platform only delivers webhooks to https:// URLs, while n8n listens
// on plain http. A certificate authority and a server certificate for 127.0.0.1/localhost are
// made at start with the `openssl` CLI; the CA certificate is handed to the sandbox API so its
// deliveries verify the front, and n8n's WEBHOOK_URL points at the front.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { log } from './log';
import { runChecked } from './processes';

export interface Certificates {
	dir: string;
	caCertPem: string;
	caCertFile: string;
	certPem: string;
	keyPem: string;
}

/** A fresh CA and a server certificate (SAN IP:127.0.0.1, DNS:localhost) in `dir`. */
export async function makeCertificates(dir: string): Promise<Certificates> {
	fs.mkdirSync(dir, { recursive: true });
	const f = (name: string) => path.join(dir, name);
	const ossl = (args: string[]) => runChecked('openssl', args, { name: 'openssl' });
	await ossl([
		'req',
		'-x509',
		'-newkey',
		'rsa:2048',
		'-nodes',
		'-sha256',
		'-days',
		'30',
		'-keyout',
		f('ca.key'),
		'-out',
		f('ca.crt'),
		'-subj',
		'/CN=n8n-nodes-learning-platform test CA',
		'-addext',
		'basicConstraints=critical,CA:TRUE',
		'-addext',
		'keyUsage=critical,keyCertSign,cRLSign',
	]);
	await ossl([
		'req',
		'-newkey',
		'rsa:2048',
		'-nodes',
		'-sha256',
		'-keyout',
		f('server.key'),
		'-out',
		f('server.csr'),
		'-subj',
		'/CN=127.0.0.1',
	]);
	fs.writeFileSync(
		f('server.ext'),
		[
			'basicConstraints=CA:FALSE',
			'keyUsage=critical,digitalSignature,keyEncipherment',
			'extendedKeyUsage=serverAuth',
			'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
			'',
		].join('\n'),
	);
	await ossl([
		'x509',
		'-req',
		'-in',
		f('server.csr'),
		'-CA',
		f('ca.crt'),
		'-CAkey',
		f('ca.key'),
		'-CAcreateserial',
		'-out',
		f('server.crt'),
		'-days',
		'30',
		'-sha256',
		'-extfile',
		f('server.ext'),
	]);
	return {
		dir,
		caCertPem: fs.readFileSync(f('ca.crt'), 'utf8'),
		caCertFile: f('ca.crt'),
		certPem: fs.readFileSync(f('server.crt'), 'utf8'),
		keyPem: fs.readFileSync(f('server.key'), 'utf8'),
	};
}

export interface FrontRequest {
	at: number;
	method: string;
	url: string;
	status?: number;
	error?: string;
}

export interface TlsFront {
	port: number;
	/** `https://127.0.0.1:<port>` */
	url: string;
	certificates: Certificates;
	/** Every request proxied, in order (for assertions: "the delivery came through the front"). */
	requests: FrontRequest[];
	/** Holds n8n's answers back this long before passing them on (a slow network or n8n); 0 = off. */
	delayResponses(ms: number): void;
	close(): Promise<void>;
}

/** An https reverse proxy on 127.0.0.1:`port` to http://127.0.0.1:`targetPort`, streaming both ways. */
export async function startTlsFront(options: {
	port: number;
	targetPort: number;
	certificates: Certificates;
	host?: string;
}): Promise<TlsFront> {
	const targetPort = options.targetPort;
	let responseDelayMs = 0;
	const requests: FrontRequest[] = [];
	const server = https.createServer(
		{ key: options.certificates.keyPem, cert: options.certificates.certPem },
		(req, res) => {
			const entry: FrontRequest = {
				at: Date.now(),
				method: req.method ?? 'GET',
				url: req.url ?? '/',
			};
			requests.push(entry);
			if (requests.length > 5000) requests.shift();
			const headers = { ...req.headers };
			const remote = req.socket.remoteAddress ?? '127.0.0.1';
			headers['x-forwarded-for'] = headers['x-forwarded-for']
				? `${String(headers['x-forwarded-for'])}, ${remote}`
				: remote;
			headers['x-forwarded-proto'] = 'https';
			headers['x-forwarded-host'] = headers.host ?? `127.0.0.1:${options.port}`;
			const upstream = http.request(
				{ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers },
				(upstreamRes) => {
					entry.status = upstreamRes.statusCode;
					const forward = () => {
						res.writeHead(
							upstreamRes.statusCode ?? 502,
							upstreamRes.statusMessage,
							upstreamRes.headers,
						);
						upstreamRes.pipe(res);
					};
					if (responseDelayMs > 0) setTimeout(forward, responseDelayMs);
					else forward();
				},
			);
			upstream.on('error', (error) => {
				entry.error = error.message;
				entry.status = 502;
				if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
				res.end(`TLS front: n8n is not reachable (${error.message})\n`);
			});
			req.pipe(upstream);
		},
	);
	const sockets = new Set<import('node:stream').Duplex>();
	server.on('connection', (socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port, options.host ?? '127.0.0.1', () => {
			server.off('error', reject);
			resolve();
		});
	});
	const port = (server.address() as AddressInfo).port;
	log(`TLS front on https://127.0.0.1:${port} -> http://127.0.0.1:${targetPort}`);
	return {
		port,
		url: `https://127.0.0.1:${port}`,
		certificates: options.certificates,
		requests,
		delayResponses(ms) {
			responseDelayMs = ms;
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				for (const socket of sockets) socket.destroy();
			}),
	};
}
