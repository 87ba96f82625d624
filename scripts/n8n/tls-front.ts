// The TLS front: the learning platform only delivers webhooks to https:// URLs, while n8n listens
// on plain http. A certificate authority and a server certificate for 127.0.0.1/localhost are
// made at start with the `openssl` CLI; the CA certificate is handed to the sandbox API so its
// deliveries verify the front, and n8n's WEBHOOK_URL points at the front. With `n8n webhook`
// processes (queue.ts), the front is also their load balancer: `/webhook/` round-robin over them,
// everything else to the main, and each request's backend recorded.
import { createHash } from 'node:crypto';
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

/**
 * A fresh CA and a server certificate in `dir`: for 127.0.0.1 and localhost (the TLS front), or
 * for the names given (`commonName`, `altNames` as openssl's subjectAltName list, e.g. the Google
 * Sheets stand-in's `DNS:sheets.googleapis.com`).
 */
export async function makeCertificates(
	dir: string,
	names: { commonName: string; altNames: string } = {
		commonName: '127.0.0.1',
		altNames: 'IP:127.0.0.1,IP:::1,DNS:localhost',
	},
): Promise<Certificates> {
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
		`/CN=${names.commonName}`,
	]);
	fs.writeFileSync(
		f('server.ext'),
		[
			'basicConstraints=CA:FALSE',
			'keyUsage=critical,digitalSignature,keyEncipherment',
			'extendedKeyUsage=serverAuth',
			`subjectAltName=${names.altNames}`,
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
	/** Which backend served it: `main`, or the name of a webhook process. */
	backend: string;
	/** SHA-256 (hex) of the request body as received: identical bytes (a platform retry) share it. */
	bodySha256?: string;
	status?: number;
	/** When the backend's answer headers arrived. */
	answeredAt?: number;
	error?: string;
}

/** An n8n process the front forwards to (plain http on 127.0.0.1). */
export interface FrontBackend {
	name: string;
	port: number;
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
	/**
	 * Production webhooks (`/webhook/...`) go round-robin over these backends, one request each in
	 * turn, as a load balancer in front of `n8n webhook` processes does; everything else (editor,
	 * REST, `/webhook-test/`, `/webhook-waiting/`) goes to the main. Empty: all to the main.
	 */
	setWebhookBackends(backends: FrontBackend[]): void;
	/**
	 * How `/webhook/` requests are spread: 'round-robin' (default), or 'x-signature': by a hash of
	 * the request's `X-Signature` header, so that a retry (the same bytes, the same signature) goes
	 * where its first attempt went, as nginx's `hash $http_x_signature` does.
	 */
	setWebhookRouting(routing: WebhookRouting): void;
	close(): Promise<void>;
}

export type WebhookRouting = 'round-robin' | 'x-signature';

/** Requests kept in `front.requests` (the oldest are dropped beyond this). */
const MAX_RECORDED = 50_000;

/**
 * An https reverse proxy on 127.0.0.1:`port` to http://127.0.0.1:`targetPort` (the main), streaming
 * both ways; with webhook backends set, `/webhook/` requests are spread over them round-robin. No
 * health checks and no failover: a backend that is down answers 502 through the front, like a
 * load balancer whose checks have not noticed yet.
 */
export async function startTlsFront(options: {
	port: number;
	targetPort: number;
	certificates: Certificates;
	host?: string;
}): Promise<TlsFront> {
	const main: FrontBackend = { name: 'main', port: options.targetPort };
	let webhookBackends: FrontBackend[] = [];
	let nextWebhookBackend = 0;
	let webhookRouting: WebhookRouting = 'round-robin';
	let responseDelayMs = 0;
	const requests: FrontRequest[] = [];
	const route = (url: string, signature: unknown): FrontBackend => {
		if (!webhookBackends.length || !url.startsWith('/webhook/')) return main;
		if (webhookRouting === 'x-signature' && typeof signature === 'string')
			return webhookBackends[
				createHash('sha256').update(signature).digest().readUInt32BE(0) % webhookBackends.length
			];
		const backend = webhookBackends[nextWebhookBackend % webhookBackends.length];
		nextWebhookBackend = (nextWebhookBackend + 1) % webhookBackends.length;
		return backend;
	};
	const server = https.createServer(
		{ key: options.certificates.keyPem, cert: options.certificates.certPem },
		(req, res) => {
			const backend = route(req.url ?? '/', req.headers['x-signature']);
			const entry: FrontRequest = {
				at: Date.now(),
				method: req.method ?? 'GET',
				url: req.url ?? '/',
				backend: backend.name,
			};
			requests.push(entry);
			if (requests.length > MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED);
			const hash = createHash('sha256');
			req.on('data', (chunk: Buffer) => hash.update(chunk));
			req.on('end', () => (entry.bodySha256 = hash.digest('hex')));
			// A side that goes away mid-request is recorded, never an uncaught error in this process.
			const failed = (error: Error) => {
				entry.error ??= error.message;
				upstream.destroy();
			};
			req.on('error', failed);
			res.on('error', failed);
			const headers = { ...req.headers };
			const remote = req.socket.remoteAddress ?? '127.0.0.1';
			headers['x-forwarded-for'] = headers['x-forwarded-for']
				? `${String(headers['x-forwarded-for'])}, ${remote}`
				: remote;
			headers['x-forwarded-proto'] = 'https';
			headers['x-forwarded-host'] = headers.host ?? `127.0.0.1:${options.port}`;
			const upstream = http.request(
				{ host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers },
				(upstreamRes) => {
					upstreamRes.on('error', (error) => {
						entry.error ??= error.message;
						res.destroy();
					});
					entry.status = upstreamRes.statusCode;
					entry.answeredAt = Date.now();
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
				entry.answeredAt = Date.now();
				if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
				res.end(`TLS front: n8n (${backend.name}) is not reachable (${error.message})\n`);
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
	log(`TLS front on https://127.0.0.1:${port} -> http://127.0.0.1:${main.port}`);
	return {
		port,
		url: `https://127.0.0.1:${port}`,
		certificates: options.certificates,
		requests,
		delayResponses(ms) {
			responseDelayMs = ms;
		},
		setWebhookBackends(backends) {
			webhookBackends = [...backends];
			nextWebhookBackend = 0;
			log(
				`TLS front: /webhook/ round-robin over ${backends.map((b) => `${b.name} (:${b.port})`).join(', ') || 'the main only'}`,
			);
		},
		setWebhookRouting(routing) {
			webhookRouting = routing;
			log(`TLS front: /webhook/ requests spread by ${routing}`);
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				for (const socket of sockets) socket.destroy();
			}),
	};
}
