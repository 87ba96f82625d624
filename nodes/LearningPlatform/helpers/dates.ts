import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Converts the dates n8n users give into the feed's strict `YYYY-MM-DDThh:mm:ssZ` (UTC) form.
 * The feed rejects the `+00:00` notation, so nothing else may reach `updatedSince`.
 */

export interface FeedTimestampOptions {
	/** the node, for the error (the error is a NodeOperationError either way) */
	node?: INode;
	itemIndex?: number;
	/**
	 * IANA zone for wall-clock values without an offset, such as n8n's date picker
	 * (`2024-05-01T09:00:00`): pass `this.getTimezone()` so they mean the workflow's time zone.
	 * Default `UTC`.
	 */
	timezone?: string;
}

const EXPECTED_FORMS =
	'Use an ISO 8601 date such as 2024-05-01T09:00:00Z or 2024-05-01T11:00:00+02:00, a date picker value, {{ $now }} / a Luxon DateTime, a JavaScript Date, or a Unix timestamp (milliseconds or seconds)';

// Unix seconds below this, milliseconds at or above it: 1e11 ms is March 1973 while 1e11 s is
// the year 5138, so no realistic value is ambiguous.
const SECONDS_MILLISECONDS_BOUNDARY = 1e11;

const ISO_PATTERN =
	/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;

const PLACEHOLDER_NODE: INode = {
	id: 'learning-platform',
	name: 'Learning Platform',
	type: 'learningPlatform',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

function invalid(
	value: unknown,
	fieldName: string,
	options: FeedTimestampOptions,
	why?: string,
): never {
	const shown =
		typeof value === 'string'
			? `"${value}"`
			: typeof value === 'object'
				? 'an object'
				: String(value);
	throw new NodeOperationError(
		options.node ?? PLACEHOLDER_NODE,
		`The value of "${fieldName}" is not a date: ${shown}${why ? ` (${why})` : ''}`,
		{ description: EXPECTED_FORMS, itemIndex: options.itemIndex },
	);
}

/** Offset of `timeZone` from UTC at instant `utcMs`, in ms (positive east of Greenwich). */
function zoneOffsetMs(utcMs: number, timeZone: string): number {
	const formatter = new Intl.DateTimeFormat('en-US', {
		timeZone,
		hourCycle: 'h23',
		year: 'numeric',
		month: '2-digit',
		day: '2-digit',
		hour: '2-digit',
		minute: '2-digit',
		second: '2-digit',
	});
	const parts: Record<string, number> = {};
	for (const part of formatter.formatToParts(new Date(utcMs))) {
		if (part.type !== 'literal') parts[part.type] = Number(part.value);
	}
	const wallAsUtc = Date.UTC(
		parts.year,
		parts.month - 1,
		parts.day,
		parts.hour,
		parts.minute,
		parts.second,
	);
	return wallAsUtc - Math.floor(utcMs / 1000) * 1000;
}

/** A wall-clock time in `timeZone` (given as if it were UTC) to the real UTC instant. */
function wallClockToUtc(wallAsUtcMs: number, timeZone: string): number {
	if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return wallAsUtcMs;
	try {
		const firstGuess = wallAsUtcMs - zoneOffsetMs(wallAsUtcMs, timeZone);
		// second pass settles values near a daylight-saving change
		return wallAsUtcMs - zoneOffsetMs(firstGuess, timeZone);
	} catch {
		// unknown zone name: treat as UTC rather than failing on a setting the user cannot see here
		return wallAsUtcMs;
	}
}

function parseIsoString(text: string, timeZone: string): number | undefined {
	const match = ISO_PATTERN.exec(text);
	if (!match) return undefined;
	const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone] = match;
	const parts = [year, month, day, hour, minute, second].map(Number);
	const [y, mo, d, h, mi, s] = parts;
	if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
	const wallAsUtc = Date.UTC(y, mo - 1, d, h, mi, s, Number(`0.${fraction || '0'}`) * 1000);
	// Date.UTC rolls 2024-02-31 over into March: reject instead
	if (new Date(wallAsUtc).getUTCDate() !== d) return undefined;
	if (!zone) return wallClockToUtc(wallAsUtc, timeZone);
	const upper = zone.toUpperCase();
	if (upper === 'Z' || upper === 'UTC' || upper === 'GMT') return wallAsUtc;
	const sign = zone.startsWith('-') ? -1 : 1;
	const digits = zone.slice(1).replace(':', '');
	const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
	return wallAsUtc - sign * offsetMinutes * 60_000;
}

function fromEpoch(value: number): number {
	return Math.abs(value) < SECONDS_MILLISECONDS_BOUNDARY ? value * 1000 : value;
}

function toMilliseconds(value: unknown, timeZone: string): number | undefined {
	if (value instanceof Date) return value.getTime();
	if (typeof value === 'number') return Number.isFinite(value) ? fromEpoch(value) : undefined;
	if (typeof value === 'string') {
		const text = value.trim();
		if (/^-?\d+(\.\d+)?$/.test(text)) return fromEpoch(Number(text));
		const iso = parseIsoString(text, timeZone);
		if (iso !== undefined) return iso;
		// ISO-looking text the strict parser refused (2024-02-30, 25:00) stays refused:
		// Date.parse would roll it over into another day
		if (/^\d{4}-\d{2}/.test(text)) return undefined;
		// Other notations (RFC 2822, `Date.toString()`) only with an explicit zone, because
		// a zone-less string would be read in the server process's local time.
		if (/(Z|GMT|UTC|[+-]\d{2}:?\d{2})(\s*\([^)]*\))?$/i.test(text)) {
			const parsed = Date.parse(text);
			return Number.isNaN(parsed) ? undefined : parsed;
		}
		return undefined;
	}
	if (value !== null && typeof value === 'object') {
		// Luxon DateTime ($now, DateTime.fromISO...), without importing Luxon
		const candidate = value as { isValid?: boolean; toMillis?: () => number; toISO?: () => string };
		if (typeof candidate.toMillis === 'function') {
			return candidate.isValid === false ? undefined : candidate.toMillis();
		}
		if (typeof candidate.toISO === 'function') return toMilliseconds(candidate.toISO(), timeZone);
	}
	return undefined;
}

/**
 * Any date n8n users give -> `YYYY-MM-DDThh:mm:ssZ` in UTC. Fractions of a second are cut
 * (rounded down) because the feed's `updatedSince` is inclusive: an earlier bound can only
 * return a record again (consumers upsert), a later one could skip it.
 * Throws a NodeOperationError naming `fieldName` and the accepted forms otherwise.
 */
export function toFeedTimestamp(
	value: unknown,
	fieldName: string,
	options: FeedTimestampOptions = {},
): string {
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
		invalid(value, fieldName, options, 'empty');
	}
	const milliseconds = toMilliseconds(value, options.timezone ?? 'UTC');
	if (milliseconds === undefined || !Number.isFinite(milliseconds))
		invalid(value, fieldName, options);
	const date = new Date(Math.floor(milliseconds / 1000) * 1000);
	const year = date.getUTCFullYear();
	if (Number.isNaN(date.getTime()) || year < 1970 || year > 9999) {
		invalid(value, fieldName, options, 'outside the years 1970 to 9999');
	}
	return formatFeedTimestamp(date.getTime());
}

/** An instant in the feed's form, `YYYY-MM-DDThh:mm:ssZ` (fractions of a second cut). */
export function formatFeedTimestamp(milliseconds: number): string {
	return `${new Date(milliseconds).toISOString().slice(0, 19)}Z`;
}
