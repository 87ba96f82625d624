// The Google Sheets stand-in (test/support/googleSheets/) answers as Google's Sheets API v4 does,
// reached as n8n reaches it: through its CONNECT proxy, over TLS verified with its CA.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProxyAgent, request } from 'undici';
import { GoogleSheetsStandIn, SHEETS_HOST } from './googleSheets/standIn';

const TOKEN = 'ya29.stand-in-token';

describe('Google Sheets stand-in', () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-sheets-standin-'));
	const standIn = new GoogleSheetsStandIn({ dir, token: TOKEN });
	let agent: ProxyAgent;

	beforeAll(async () => {
		await standIn.start();
		agent = new ProxyAgent({
			uri: standIn.proxyUrl,
			requestTls: { ca: fs.readFileSync(standIn.caFile, 'utf8') },
		});
	}, 60_000);
	afterAll(async () => {
		await agent.close();
		await standIn.close();
		fs.rmSync(dir, { recursive: true, force: true });
	});

	async function call(
		method: 'GET' | 'PUT' | 'POST',
		pathAndQuery: string,
		body?: unknown,
		token = TOKEN,
	): Promise<{ status: number; body: Record<string, any> }> {
		const response = await request(`https://${SHEETS_HOST}${pathAndQuery}`, {
			method,
			dispatcher: agent,
			headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		return {
			status: response.statusCode,
			body: (await response.body.json()) as Record<string, any>,
		};
	}

	const newSheet = (header = ['Completion ID', 'Course']) =>
		standIn.createSpreadsheet('Completions', [{ title: 'Sheet1', header }]);

	test('opens tunnels to sheets.googleapis.com:443 only', async () => {
		const other = new ProxyAgent({ uri: standIn.proxyUrl });
		await expect(
			request('https://oauth2.googleapis.com/token', { method: 'POST', dispatcher: other }),
		).rejects.toThrow();
		await other.close();
		expect(standIn.refusedTunnels).toContain('oauth2.googleapis.com:443');
	});

	test('spreadsheets.get and values.get: the sheet properties, the stored rows, no values for an empty range', async () => {
		const id = newSheet();
		const meta = await call('GET', `/v4/spreadsheets/${id}?fields=sheets.properties`);
		expect(meta.body.sheets[0].properties).toMatchObject({
			sheetId: 0,
			title: 'Sheet1',
			gridProperties: { rowCount: 1000, columnCount: 26 },
		});
		const all = await call('GET', `/v4/spreadsheets/${id}/values/Sheet1!A:Z`);
		expect(all.body.values).toEqual([['Completion ID', 'Course']]);
		const empty = await call('GET', `/v4/spreadsheets/${id}/values/Sheet1!A5:Z9`);
		expect(empty.status).toBe(200);
		expect(empty.body.values).toBeUndefined();
		expect((await call('GET', `/v4/spreadsheets/nope/values/Sheet1`)).body.error.status).toBe(
			'NOT_FOUND',
		);
	});

	test('a PUT of a range overwrites it: two writers that read the same sheet keep one row', async () => {
		const id = newSheet();
		for (const course of ['First', 'Second'])
			expect(
				(
					await call(
						'PUT',
						`/v4/spreadsheets/${id}/values/Sheet1!2:2?valueInputOption=USER_ENTERED`,
						{
							range: 'Sheet1!2:2',
							values: [[course === 'First' ? '1' : '2', course]],
						},
					)
				).status,
			).toBe(200);
		expect(standIn.rows(id, 'Sheet1')).toEqual([
			['Completion ID', 'Course'],
			['2', 'Second'],
		]);
	});

	test('a PUT outside the grid is refused until appendDimension grows it', async () => {
		const id = newSheet();
		const put = () =>
			call('PUT', `/v4/spreadsheets/${id}/values/Sheet1!1001:1001?valueInputOption=RAW`, {
				values: [['x']],
			});
		const refused = await put();
		expect(refused.status).toBe(400);
		expect(refused.body.error.message).toMatch(/exceeds grid limits/);
		await call('POST', `/v4/spreadsheets/${id}:batchUpdate`, {
			requests: [{ appendDimension: { sheetId: 0, dimension: 'ROWS', length: 1 } }],
		});
		expect((await put()).status).toBe(200);
	});

	test('values.append writes after the table, however stale the range: 30 at once are 30 rows', async () => {
		const id = newSheet();
		// each caller read the header only, so each names row 2
		const results = await Promise.all(
			Array.from({ length: 30 }, (_, i) =>
				call(
					'POST',
					`/v4/spreadsheets/${id}/values/Sheet1!2:2:append?valueInputOption=USER_ENTERED`,
					{
						range: 'Sheet1!2:2',
						values: [[String(100 + i), `Course ${i}`]],
					},
				),
			),
		);
		expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
		const rows = standIn.rows(id, 'Sheet1').slice(1);
		expect(rows).toHaveLength(30);
		expect(new Set(rows.map((r) => r[0])).size).toBe(30);
		expect(results[1].body.updates.updatedRange).toMatch(/^Sheet1!A\d+:B\d+$/);
	});

	test('USER_ENTERED stores numbers as numbers; FORMATTED_VALUE reads them as text', async () => {
		const id = newSheet();
		await call(
			'POST',
			`/v4/spreadsheets/${id}/values/Sheet1!A:Z:append?valueInputOption=USER_ENTERED`,
			{
				values: [['843', 'Health and Safety']],
			},
		);
		const raw = await call(
			'GET',
			`/v4/spreadsheets/${id}/values/Sheet1!A2:B2?valueRenderOption=UNFORMATTED_VALUE`,
		);
		expect(raw.body.values).toEqual([[843, 'Health and Safety']]);
		const shown = await call('GET', `/v4/spreadsheets/${id}/values/Sheet1!A2:B2`);
		expect(shown.body.values).toEqual([['843', 'Health and Safety']]);
		await call('POST', `/v4/spreadsheets/${id}/values:batchUpdate`, {
			valueInputOption: 'USER_ENTERED',
			data: [{ range: 'Sheet1!B2', values: [['Fire Safety']] }],
		});
		expect(standIn.records(id, 'Sheet1')).toEqual([
			{ 'Completion ID': '843', Course: 'Fire Safety' },
		]);
	});

	test('60 writes a minute per user, then 429 RESOURCE_EXHAUSTED; reads are counted apart; a minute later writes pass again', async () => {
		const quota = new GoogleSheetsStandIn({ dir: path.join(dir, 'quota'), token: TOKEN });
		await quota.start();
		const quotaAgent = new ProxyAgent({
			uri: quota.proxyUrl,
			requestTls: { ca: fs.readFileSync(quota.caFile, 'utf8') },
		});
		try {
			const id = quota.createSpreadsheet('q', [{ title: 'Sheet1', header: ['n'] }]);
			const send = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
				const r = await request(`https://${SHEETS_HOST}${p}`, {
					method,
					dispatcher: quotaAgent,
					headers: { authorization: `Bearer ${TOKEN}` },
					body: body === undefined ? undefined : JSON.stringify(body),
				});
				return { status: r.statusCode, body: (await r.body.json()) as Record<string, any> };
			};
			const append = (n: number) =>
				send('POST', `/v4/spreadsheets/${id}/values/Sheet1!A:A:append?valueInputOption=RAW`, {
					values: [[n]],
				});
			const statuses: number[] = [];
			for (let n = 0; n < 61; n++) statuses.push((await append(n)).status);
			expect(statuses.filter((s) => s === 200)).toHaveLength(60);
			const refused = await append(61);
			expect(refused.status).toBe(429);
			expect(refused.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
			expect(refused.body.error.message).toMatch(/Write requests per minute per user/);
			// reads have their own 60
			expect((await send('GET', `/v4/spreadsheets/${id}/values/Sheet1`)).status).toBe(200);
			quota.advanceClock(60_000);
			expect((await append(62)).status).toBe(200);
			// the refused writes wrote nothing
			expect(quota.rows(id, 'Sheet1')).toHaveLength(1 + 61);
		} finally {
			await quotaAgent.close();
			await quota.close();
		}
	});

	test('an outage answers 503 UNAVAILABLE until its end on the stand-in clock; an unknown token 401', async () => {
		const id = newSheet();
		standIn.outage(10 * 60_000);
		const down = await call('GET', `/v4/spreadsheets/${id}?fields=sheets.properties`);
		expect(down.status).toBe(503);
		expect(down.body.error.status).toBe('UNAVAILABLE');
		standIn.advanceClock(10 * 60_000);
		expect((await call('GET', `/v4/spreadsheets/${id}?fields=sheets.properties`)).status).toBe(200);
		const stranger = await call('GET', `/v4/spreadsheets/${id}`, undefined, 'ya29.other');
		expect(stranger.status).toBe(401);
		expect(stranger.body.error.status).toBe('UNAUTHENTICATED');
	});
});
