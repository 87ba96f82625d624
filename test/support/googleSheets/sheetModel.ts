// The data model behind the Google Sheets stand-in (standIn.ts): spreadsheets of grid sheets, A1
// ranges, and the four value operations n8n's Google Sheets node uses, with the rules of Google's
// Sheets API v4 that decide where a row lands:
// - values.get returns what is stored in the range, trailing empty cells and rows cut off (no
//   `values` at all for an empty range), numbers as numbers (UNFORMATTED_VALUE) or as text
//   (FORMATTED_VALUE);
// - values.update (PUT) overwrites the cells of its range, and refuses a range outside the grid;
// - values.append finds the table the range belongs to and writes after the table's last row, in
//   one step (two appends never land on the same row), growing the grid as needed;
// - spreadsheets.batchUpdate `appendDimension` grows the grid (rows or columns).
// valueInputOption USER_ENTERED turns text that reads as a number into a number and TRUE/FALSE into
// booleans; RAW keeps what was sent. Text Google would read as a date or a formula is kept as text
// here: the recipes write none (their times are ISO 8601 with a `T`, which Sheets keeps as text).
export type Cell = string | number | boolean;

export class SheetsApiError extends Error {
	constructor(
		readonly code: number,
		readonly status: string,
		message: string,
	) {
		super(message);
	}
}

const badRequest = (message: string) => new SheetsApiError(400, 'INVALID_ARGUMENT', message);

export interface GridRange {
	sheet: Sheet;
	/** 0-based, inclusive; undefined: open (to the grid's edge) */
	startRow?: number;
	endRow?: number;
	startCol?: number;
	endCol?: number;
}

export function columnLetters(index: number): string {
	let letters = '';
	let n = index + 1;
	while (n > 0) {
		const rest = (n - 1) % 26;
		letters = String.fromCharCode(65 + rest) + letters;
		n = Math.floor((n - 1) / 26);
	}
	return letters;
}

function columnIndex(letters: string): number {
	let n = 0;
	for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
	return n - 1;
}

/** One side of an A1 range: `B3`, `B`, `3`. */
function parseCorner(text: string): { row?: number; col?: number } {
	const match = /^([A-Za-z]*)(\d*)$/.exec(text);
	if (!match || (!match[1] && !match[2])) throw new Error(text);
	return {
		col: match[1] ? columnIndex(match[1]) : undefined,
		row: match[2] ? Number(match[2]) - 1 : undefined,
	};
}

export class Sheet {
	rows: Cell[][] = [];
	constructor(
		readonly sheetId: number,
		readonly title: string,
		public rowCount = 1000,
		public columnCount = 26,
	) {}

	get(row: number, col: number): Cell | undefined {
		return this.rows[row]?.[col];
	}

	set(row: number, col: number, value: Cell | undefined): void {
		const cells = (this.rows[row] ??= []);
		if (value === undefined || value === '') delete cells[col];
		else cells[col] = value;
	}

	rowIsEmpty(row: number, startCol = 0, endCol = this.columnCount - 1): boolean {
		const cells = this.rows[row];
		if (!cells) return true;
		for (let c = startCol; c <= endCol; c++) if (cells[c] !== undefined) return false;
		return true;
	}

	/** Index of the last row holding a value (-1: none). */
	lastDataRow(): number {
		for (let r = this.rows.length - 1; r >= 0; r--) if (!this.rowIsEmpty(r)) return r;
		return -1;
	}

	properties() {
		return {
			sheetId: this.sheetId,
			title: this.title,
			index: 0,
			sheetType: 'GRID',
			gridProperties: { rowCount: this.rowCount, columnCount: this.columnCount },
		};
	}
}

export class Spreadsheet {
	readonly sheets: Sheet[] = [];
	constructor(
		readonly spreadsheetId: string,
		readonly title: string,
	) {}

	addSheet(title: string, header?: string[]): Sheet {
		const sheet = new Sheet(this.sheets.length === 0 ? 0 : 1000 + this.sheets.length, title);
		header?.forEach((name, col) => sheet.set(0, col, name));
		this.sheets.push(sheet);
		return sheet;
	}

	sheetById(sheetId: number): Sheet {
		const sheet = this.sheets.find((s) => s.sheetId === sheetId);
		if (!sheet) throw badRequest(`No grid with id: ${sheetId}`);
		return sheet;
	}

	/**
	 * An A1 range as Google reads it: `Sheet1!A1:B2`, `'My sheet'!A:Z`, `Sheet1!5:5`, `Sheet1`
	 * (the whole sheet) or, without a sheet name, a range of the first sheet.
	 */
	range(text: string): GridRange {
		let name: string | undefined;
		let a1 = text;
		const quoted = /^'((?:[^']|'')*)'(?:!(.*))?$/.exec(text);
		if (quoted) {
			name = quoted[1].replace(/''/g, "'");
			a1 = quoted[2] ?? '';
		} else if (text.includes('!')) {
			const at = text.lastIndexOf('!');
			name = text.slice(0, at);
			a1 = text.slice(at + 1);
		} else if (this.sheets.some((s) => s.title === text)) {
			name = text;
			a1 = '';
		}
		const sheet = name === undefined ? this.sheets[0] : this.sheets.find((s) => s.title === name);
		if (!sheet) throw badRequest(`Unable to parse range: ${text}`);
		if (!a1) return { sheet };
		try {
			const [first, second] = a1.split(':');
			const start = parseCorner(first);
			const end = second === undefined ? start : parseCorner(second);
			return {
				sheet,
				startRow: start.row,
				startCol: start.col,
				endRow: second === undefined ? start.row : end.row,
				endCol: second === undefined ? start.col : end.col,
			};
		} catch {
			throw badRequest(`Unable to parse range: ${text}`);
		}
	}
}

/** The range's bounds on its sheet's grid (open sides closed at the grid's edge). */
function bounds(range: GridRange) {
	const { sheet } = range;
	return {
		startRow: range.startRow ?? 0,
		endRow: range.endRow ?? sheet.rowCount - 1,
		startCol: range.startCol ?? 0,
		endCol: range.endCol ?? sheet.columnCount - 1,
	};
}

export function a1(
	sheet: Sheet,
	startRow: number,
	startCol: number,
	endRow: number,
	endCol: number,
) {
	const name = /^[A-Za-z0-9_]+$/.test(sheet.title)
		? sheet.title
		: `'${sheet.title.replace(/'/g, "''")}'`;
	return `${name}!${columnLetters(startCol)}${startRow + 1}:${columnLetters(endCol)}${endRow + 1}`;
}

export type ValueInputOption = 'RAW' | 'USER_ENTERED';
export type ValueRenderOption = 'FORMATTED_VALUE' | 'UNFORMATTED_VALUE' | 'FORMULA';

/** A value as Google stores it; `undefined`: leave the cell as it is (a JSON null). */
export function inputValue(value: unknown, option: ValueInputOption): Cell | undefined {
	if (value === null || value === undefined) return undefined;
	if (typeof value === 'object') throw badRequest(`Invalid values: ${JSON.stringify(value)}`);
	if (option === 'RAW' || typeof value !== 'string') return value as Cell;
	const text = value.trim();
	if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
	if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
	return value;
}

function rendered(cell: Cell | undefined, option: ValueRenderOption): Cell | '' {
	if (cell === undefined) return '';
	if (option === 'UNFORMATTED_VALUE') return cell;
	if (typeof cell === 'boolean') return cell ? 'TRUE' : 'FALSE';
	return String(cell);
}

function valueInputOption(option: unknown): ValueInputOption {
	if (option !== 'RAW' && option !== 'USER_ENTERED')
		throw badRequest(
			option === undefined
				? "'valueInputOption' is required but not specified"
				: `Invalid value at 'value_input_option' (${String(option)})`,
		);
	return option;
}

/** values.get */
export function getValues(range: GridRange, render: ValueRenderOption = 'FORMATTED_VALUE') {
	const b = bounds(range);
	const values: Array<Array<Cell | ''>> = [];
	for (let r = b.startRow; r <= Math.min(b.endRow, range.sheet.rowCount - 1); r++) {
		const row: Array<Cell | ''> = [];
		for (let c = b.startCol; c <= b.endCol; c++) row.push(rendered(range.sheet.get(r, c), render));
		while (row.length && row[row.length - 1] === '') row.pop();
		values.push(row);
	}
	while (values.length && values[values.length - 1].length === 0) values.pop();
	return {
		range: a1(range.sheet, b.startRow, b.startCol, b.endRow, b.endCol),
		majorDimension: 'ROWS',
		...(values.length ? { values } : {}),
	};
}

/** Writes `values` from the range's top-left corner: values.update and each range of values.batchUpdate. */
function writeAt(range: GridRange, values: unknown, option: ValueInputOption, grow: boolean) {
	if (!Array.isArray(values) || values.some((row) => !Array.isArray(row)))
		throw badRequest('Invalid values: a list of rows is required');
	const rows = values as unknown[][];
	const b = bounds(range);
	const width = Math.max(0, ...rows.map((row) => row.length));
	const lastRow = b.startRow + rows.length - 1;
	const lastCol = b.startCol + width - 1;
	if (range.endRow !== undefined && lastRow > range.endRow)
		throw badRequest(
			`Requested writing within range [${a1(range.sheet, b.startRow, b.startCol, b.endRow, b.endCol)}], but tried writing to row [${lastRow + 1}]`,
		);
	if (range.endCol !== undefined && lastCol > range.endCol)
		throw badRequest(
			`Requested writing within range [${a1(range.sheet, b.startRow, b.startCol, b.endRow, b.endCol)}], but tried writing to column [${columnLetters(lastCol)}]`,
		);
	const { sheet } = range;
	if (grow) {
		sheet.rowCount = Math.max(sheet.rowCount, lastRow + 1);
		sheet.columnCount = Math.max(sheet.columnCount, lastCol + 1);
	} else if (lastRow >= sheet.rowCount || lastCol >= sheet.columnCount)
		throw badRequest(
			`Range (${a1(sheet, b.startRow, b.startCol, lastRow, Math.max(lastCol, b.startCol))}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`,
		);
	// every value is checked before any is written: a request applies whole or not at all
	const cells = rows.map((row) => row.map((value) => inputValue(value, option)));
	cells.forEach((row, i) =>
		row.forEach((cell, j) => {
			if (cell !== undefined) sheet.set(b.startRow + i, b.startCol + j, cell);
		}),
	);
	const updatedRange = a1(sheet, b.startRow, b.startCol, lastRow, Math.max(lastCol, b.startCol));
	return {
		updatedRange,
		updatedRows: rows.length,
		updatedColumns: width,
		updatedCells: cells.reduce((n, row) => n + row.filter((c) => c !== undefined).length, 0),
	};
}

/** values.update (PUT of a range) */
export function updateValues(range: GridRange, body: { values?: unknown }, option: unknown) {
	return writeAt(range, body.values, valueInputOption(option), false);
}

/** values.batchUpdate: every range checked first, then all written. */
export function batchUpdateValues(
	spreadsheet: Spreadsheet,
	body: { valueInputOption?: unknown; data?: Array<{ range?: string; values?: unknown }> },
) {
	const option = valueInputOption(body.valueInputOption);
	const data = body.data ?? [];
	const ranges = data.map((d) => spreadsheet.range(String(d.range)));
	// a dry run on copies would be exact; the checks that can fail are the shapes and the grid
	ranges.forEach((range, i) => {
		const rows = data[i].values;
		if (!Array.isArray(rows)) throw badRequest('Invalid values: a list of rows is required');
		const b = bounds(range);
		if (b.startRow + rows.length > range.sheet.rowCount)
			throw badRequest(`Range (${String(data[i].range)}) exceeds grid limits.`);
	});
	const responses = ranges.map((range, i) => writeAt(range, data[i].values, option, false));
	return {
		spreadsheetId: spreadsheet.spreadsheetId,
		totalUpdatedRows: responses.reduce((n, r) => n + r.updatedRows, 0),
		totalUpdatedColumns: Math.max(0, ...responses.map((r) => r.updatedColumns)),
		totalUpdatedCells: responses.reduce((n, r) => n + r.updatedCells, 0),
		totalUpdatedSheets: new Set(ranges.map((r) => r.sheet.sheetId)).size,
		responses: responses.map((r) => ({ spreadsheetId: spreadsheet.spreadsheetId, ...r })),
	};
}

/**
 * Where values.append writes: after the last row of the table the range belongs to. The table is
 * the block of consecutive non-empty rows (in the range's columns) holding the first non-empty row
 * inside the range, however far it reaches below the range; with none inside, the block that ends
 * just above the range; with neither, the range's first row.
 */
export function appendRow(range: GridRange): number {
	const { sheet } = range;
	const b = bounds(range);
	const empty = (row: number) => sheet.rowIsEmpty(row, b.startCol, b.endCol);
	const lastStored = Math.max(sheet.rows.length - 1, b.startRow);
	for (let r = b.startRow; r <= Math.min(b.endRow, lastStored); r++) {
		if (empty(r)) continue;
		let end = r;
		while (end + 1 < sheet.rows.length && !empty(end + 1)) end++;
		return end + 1;
	}
	return b.startRow;
}

/** values.append (insertDataOption OVERWRITE, Google's default), in one step. */
export function appendValues(range: GridRange, body: { values?: unknown }, option: unknown) {
	const input = valueInputOption(option);
	const b = bounds(range);
	const row = appendRow(range);
	const tableStart = (() => {
		let r = row - 1;
		while (r > 0 && !range.sheet.rowIsEmpty(r - 1, b.startCol, b.endCol)) r--;
		return Math.max(r, 0);
	})();
	const at: GridRange = {
		sheet: range.sheet,
		startRow: row,
		startCol: b.startCol,
	};
	const updates = writeAt(at, body.values, input, true);
	return {
		tableRange:
			row > 0 && row > tableStart
				? a1(range.sheet, tableStart, b.startCol, row - 1, b.endCol)
				: undefined,
		updates,
	};
}

/** spreadsheets.batchUpdate: the `appendDimension` request (the one n8n's node sends). */
export function batchUpdateSpreadsheet(
	spreadsheet: Spreadsheet,
	body: { requests?: Array<Record<string, unknown>> },
) {
	const requests = body.requests ?? [];
	const steps = requests.map((request) => {
		const append = request.appendDimension as
			| { sheetId?: number; dimension?: string; length?: number }
			| undefined;
		if (!append || Object.keys(request).length !== 1)
			throw badRequest(
				`The stand-in implements only appendDimension, not ${Object.keys(request).join(', ')}`,
			);
		const sheet = spreadsheet.sheetById(Number(append.sheetId ?? 0));
		const length = Number(append.length);
		if (!Number.isInteger(length) || length < 1)
			throw badRequest('Invalid requests[0].appendDimension: length must be at least 1');
		if (append.dimension !== 'ROWS' && append.dimension !== 'COLUMNS')
			throw badRequest('Invalid requests[0].appendDimension: dimension must be ROWS or COLUMNS');
		return () => {
			if (append.dimension === 'ROWS') sheet.rowCount += length;
			else sheet.columnCount += length;
		};
	});
	steps.forEach((apply) => apply());
	return { spreadsheetId: spreadsheet.spreadsheetId, replies: requests.map(() => ({})) };
}
