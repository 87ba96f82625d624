// A stand-in for Google's Sheets API v4 (https://sheets.googleapis.com), as n8n's own Google Sheets
// node reaches it: test support, not shipped. How n8n gets here without a change to the node: n8n
// 2.x sends its outgoing requests through the proxy named in HTTPS_PROXY (@n8n/backend-network,
// `installGlobalProxyAgent`, installed at every n8n start), the way a company proxy is set up. This
// file is that proxy: it accepts CONNECT to `sheets.googleapis.com:443` only (anything else is
// refused and listed in `refusedTunnels`), and ends the tunnel in a TLS server whose certificate for
// sheets.googleapis.com is signed by a throwaway CA that n8n trusts through NODE_EXTRA_CA_CERTS. The
// node still calls https://sheets.googleapis.com with its credential's token and verifies TLS.
//
// It answers as Google does for what the node sends (sheetModel.ts has the data rules):
// spreadsheets.get, values.get, values.update (PUT), values.append, values.batchUpdate and
// spreadsheets.batchUpdate (appendDimension), with Google's error bodies. It is as strict as Google
// on the limits: 60 read and 60 write requests a minute per user (a sliding minute on its own
// clock; a refused request counts for nothing), 429 RESOURCE_EXHAUSTED over it; 503 UNAVAILABLE
// during an outage; 401 UNAUTHENTICATED for a token it does not know. Its clock can be moved
// (`advanceClock`), so a 10-minute outage or a quota minute passes without waiting for it.
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { makeCertificates } from '../../../scripts/n8n/tls-front';
import {
	appendValues,
	batchUpdateSpreadsheet,
	batchUpdateValues,
	getValues,
	SheetsApiError,
	Spreadsheet,
	updateValues,
	type ValueRenderOption,
} from './sheetModel';

export const SHEETS_HOST = 'sheets.googleapis.com';
const MINUTE_MS = 60_000;

export type RequestKind = 'read' | 'write';

export interface StandInRequest {
	/** on the stand-in's clock */
	at: number;
	method: string;
	path: string;
	kind: RequestKind;
	/** what the request did: `values.append`, `values.update`, ... */
	operation: string;
	status: number;
	/** the reason of a refusal (Google's `status`), e.g. RESOURCE_EXHAUSTED */
	refusal?: string;
}

export interface StandInOptions {
	/** where its certificates go */
	dir: string;
	/** the OAuth access token it accepts (one Google user) */
	token: string;
	/** requests a minute per user; Google's: 60 reads and 60 writes */
	quotaPerMinute?: { read: number; write: number };
}

const googleError = (code: number, status: string, message: string, details?: unknown[]) => ({
	error: { code, message, status, ...(details ? { details } : {}) },
});

const quotaError = (kind: RequestKind) =>
	googleError(
		429,
		'RESOURCE_EXHAUSTED',
		`Quota exceeded for quota metric '${kind === 'read' ? 'Read' : 'Write'} requests' and limit '${kind === 'read' ? 'Read' : 'Write'} requests per minute per user' of service '${SHEETS_HOST}' for consumer 'project_number:000000000000'.`,
		[
			{
				'@type': 'type.googleapis.com/google.rpc.ErrorInfo',
				reason: 'RATE_LIMIT_EXCEEDED',
				domain: 'googleapis.com',
				metadata: {
					quota_metric: `${SHEETS_HOST}/${kind}_requests`,
					quota_limit: `${kind === 'read' ? 'Read' : 'Write'}RequestsPerMinutePerUser`,
					service: SHEETS_HOST,
					consumer: 'projects/000000000000',
				},
			},
		],
	);

export class GoogleSheetsStandIn {
	readonly spreadsheets = new Map<string, Spreadsheet>();
	readonly requests: StandInRequest[] = [];
	/** CONNECT targets other than sheets.googleapis.com:443, refused */
	readonly refusedTunnels: string[] = [];
	proxyUrl = '';
	caFile = '';
	private offsetMs = 0;
	private downUntil = 0;
	private readonly accepted: Record<RequestKind, number[]> = { read: [], write: [] };
	private proxy?: http.Server;
	private readonly sockets = new Set<Socket>();
	private readonly quota: { read: number; write: number };

	constructor(private readonly options: StandInOptions) {
		this.quota = options.quotaPerMinute ?? { read: 60, write: 60 };
	}

	async start(): Promise<void> {
		const certificates = await makeCertificates(this.options.dir, {
			commonName: SHEETS_HOST,
			altNames: `DNS:${SHEETS_HOST}`,
		});
		this.caFile = certificates.caCertFile;
		// never listens: the proxy hands it each tunnel's socket
		const api = https.createServer(
			{ key: certificates.keyPem, cert: certificates.certPem },
			(req, res) => this.serve(req, res),
		);
		this.proxy = http.createServer((_req, res) => {
			res.writeHead(405, { 'content-type': 'text/plain' });
			res.end('this proxy only opens tunnels (CONNECT) to sheets.googleapis.com:443\n');
		});
		this.proxy.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
			this.sockets.add(socket);
			socket.on('close', () => this.sockets.delete(socket));
			socket.on('error', () => socket.destroy());
			if (req.url !== `${SHEETS_HOST}:443`) {
				this.refusedTunnels.push(String(req.url));
				socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
				return;
			}
			socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
			if (head.length) socket.unshift(head);
			api.emit('connection', socket);
		});
		await new Promise<void>((resolve) => this.proxy!.listen(0, '127.0.0.1', resolve));
		this.proxyUrl = `http://127.0.0.1:${(this.proxy.address() as AddressInfo).port}`;
	}

	async close(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		await new Promise<void>((resolve) =>
			this.proxy ? this.proxy.close(() => resolve()) : resolve(),
		);
	}

	/** The stand-in's clock (ms): the wall clock plus what `advanceClock` added. */
	now(): number {
		return Date.now() + this.offsetMs;
	}

	advanceClock(ms: number): void {
		this.offsetMs += ms;
	}

	/** Google is down (every request 503 UNAVAILABLE) for `ms` on the stand-in's clock. */
	outage(ms: number): { from: number; until: number } {
		const from = this.now();
		this.downUntil = from + ms;
		return { from, until: this.downUntil };
	}

	isDown(): boolean {
		return this.now() < this.downUntil;
	}

	/** A new spreadsheet with these tabs, each with its header row (row 1). */
	createSpreadsheet(title: string, tabs: Array<{ title: string; header: string[] }>): string {
		const id = `1Lp${randomBytes(20).toString('hex')}`.slice(0, 44);
		const spreadsheet = new Spreadsheet(id, title);
		for (const tab of tabs) spreadsheet.addSheet(tab.title, tab.header);
		this.spreadsheets.set(id, spreadsheet);
		return id;
	}

	/** A tab as a person reads it: every row, header first, cells as shown (text). */
	rows(spreadsheetId: string, tab: string): string[][] {
		const sheet = this.sheet(spreadsheetId, tab);
		return (getValues({ sheet }, 'FORMATTED_VALUE').values ?? []).map((row) => row.map(String));
	}

	/** A tab's data rows as objects keyed by the header row. */
	records(spreadsheetId: string, tab: string): Array<Record<string, string>> {
		const [header = [], ...rows] = this.rows(spreadsheetId, tab);
		return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
	}

	/** Deletes a data row as a person does (the rows below move up); `row` is 1-based, as shown. */
	deleteRow(spreadsheetId: string, tab: string, row: number): void {
		const sheet = this.sheet(spreadsheetId, tab);
		sheet.rows.splice(row - 1, 1);
	}

	/** Requests answered so far, by operation and status (for reports). */
	summary(): Record<string, number> {
		const counts: Record<string, number> = {};
		for (const r of this.requests) {
			const key = `${r.operation} ${r.status}`;
			counts[key] = (counts[key] ?? 0) + 1;
		}
		return counts;
	}

	private sheet(spreadsheetId: string, tab: string) {
		const sheet = this.spreadsheets.get(spreadsheetId)?.sheets.find((s) => s.title === tab);
		if (!sheet) throw new Error(`no tab ${tab} in spreadsheet ${spreadsheetId}`);
		return sheet;
	}

	private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', `https://${SHEETS_HOST}`);
			const method = req.method ?? 'GET';
			const kind: RequestKind = method === 'GET' ? 'read' : 'write';
			const entry: StandInRequest = {
				at: this.now(),
				method,
				path: url.pathname,
				kind,
				operation: '?',
				status: 0,
			};
			this.requests.push(entry);
			const answer = (status: number, body: unknown) => {
				entry.status = status;
				const refusal = (body as { error?: { status?: string } }).error?.status;
				if (refusal) entry.refusal = refusal;
				res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
				res.end(JSON.stringify(body));
			};
			try {
				const route = this.route(method, url);
				entry.operation = route.operation;
				if (req.headers.authorization !== `Bearer ${this.options.token}`)
					return answer(
						401,
						googleError(
							401,
							'UNAUTHENTICATED',
							'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
						),
					);
				if (this.isDown())
					return answer(
						503,
						googleError(503, 'UNAVAILABLE', 'The service is currently unavailable.'),
					);
				const window = this.accepted[kind];
				const since = this.now() - MINUTE_MS;
				while (window.length && window[0] <= since) window.shift();
				if (window.length >= this.quota[kind]) return answer(429, quotaError(kind));
				const body = chunks.length
					? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as object)
					: {};
				const result = route.run(body);
				window.push(this.now());
				answer(200, result);
			} catch (error) {
				if (error instanceof SheetsApiError)
					return answer(error.code, googleError(error.code, error.status, error.message));
				answer(500, googleError(500, 'INTERNAL', (error as Error).message));
			}
		});
	}

	/** Which API operation a request is, and what it does. */
	private route(method: string, url: URL): { operation: string; run: (body: object) => unknown } {
		const match = /^\/v4\/spreadsheets\/([^/:]+)(.*)$/.exec(url.pathname);
		const notFound = () => new SheetsApiError(404, 'NOT_FOUND', 'Requested entity was not found.');
		if (!match) throw notFound();
		const spreadsheet = this.spreadsheets.get(match[1]);
		const rest = match[2];
		const found = () => {
			if (!spreadsheet) throw notFound();
			return spreadsheet;
		};
		const query = (name: string) => url.searchParams.get(name) ?? undefined;
		if (rest === '' && method === 'GET')
			return {
				operation: 'spreadsheets.get',
				run: () => ({
					...(query('fields') === 'sheets.properties'
						? {}
						: { spreadsheetId: found().spreadsheetId, properties: { title: found().title } }),
					sheets: found().sheets.map((sheet) => ({ properties: sheet.properties() })),
				}),
			};
		if (rest === ':batchUpdate' && method === 'POST')
			return {
				operation: 'spreadsheets.batchUpdate',
				run: (body) => batchUpdateSpreadsheet(found(), body),
			};
		if (rest === '/values:batchUpdate' && method === 'POST')
			return {
				operation: 'values.batchUpdate',
				run: (body) => batchUpdateValues(found(), body),
			};
		const values = /^\/values\/(.+?)(:append)?$/.exec(rest);
		if (values) {
			const range = () => found().range(decodeURIComponent(values[1]));
			if (values[2] && method === 'POST')
				return {
					operation: 'values.append',
					run: (body) => ({
						spreadsheetId: found().spreadsheetId,
						...appendValues(range(), body, query('valueInputOption')),
					}),
				};
			if (!values[2] && method === 'GET')
				return {
					operation: 'values.get',
					run: () =>
						getValues(
							range(),
							(query('valueRenderOption') as ValueRenderOption | undefined) ?? 'FORMATTED_VALUE',
						),
				};
			if (!values[2] && method === 'PUT')
				return {
					operation: 'values.update',
					run: (body) => ({
						spreadsheetId: found().spreadsheetId,
						...updateValues(range(), body, query('valueInputOption')),
					}),
				};
		}
		throw notFound();
	}
}
