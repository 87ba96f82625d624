import type { INode } from 'n8n-workflow';
import { NodeOperationError, tryToParseDateTime } from 'n8n-workflow';

/**
 * Converts the dates n8n users give into the feed's strict `YYYY-MM-DDThh:mm:ssZ` (UTC) form.
 * The feed rejects the `+00:00` notation, so nothing else may reach `updatedSince`.
 */

export interface FeedTimestampOptions {
	/** the node the error is about */
	node: INode;
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

const EPOCH_TEXT = /^-?\d+(\.\d+)?$/;
const ISO_LIKE = /^(\d{4}-\d{2}-\d{2})/;
/** An explicit zone at the end of a non-ISO text (RFC 2822, HTTP dates, `Date.toString()`). */
const EXPLICIT_ZONE = /(Z|GMT|UTC|[+-]\d{2}:?\d{2})(\s*\([^)]*\))?$/i;

function invalid(value: unknown, fieldName: string, options: FeedTimestampOptions): never {
	const shown =
		typeof value === 'string'
			? `"${value}"`
			: typeof value === 'object'
				? 'an object'
				: String(value);
	throw new NodeOperationError(
		options.node,
		`The value of "${fieldName}" is not a date: ${shown}`,
		{ description: EXPECTED_FORMS, itemIndex: options.itemIndex },
	);
}

function fromEpoch(value: number): number {
	return Math.abs(value) < SECONDS_MILLISECONDS_BOUNDARY ? value * 1000 : value;
}

/** Milliseconds since the epoch, or undefined when `value` is no date this node accepts. */
function toMilliseconds(value: unknown, timeZone: string): number | undefined {
	if (typeof value === 'number') return Number.isFinite(value) ? fromEpoch(value) : undefined;
	if (typeof value === 'boolean') return undefined;
	const text = typeof value === 'string' ? value.trim() : undefined;
	if (text !== undefined) {
		if (EPOCH_TEXT.test(text)) return fromEpoch(Number(text));
		// A text without a zone that is not ISO would be read in the n8n server's own time zone by
		// the last resort of tryToParseDateTime (Date.parse); refuse it instead of guessing.
		if (!ISO_LIKE.test(text) && !EXPLICIT_ZONE.test(text)) return undefined;
	}
	let parsed;
	try {
		parsed = tryToParseDateTime(value, timeZone);
	} catch {
		return undefined;
	}
	if (!parsed.isValid) return undefined;
	// Date.parse, its last resort, rolls 2024-02-30 or 24:00 over into the next day: an ISO text
	// must name the day it ends up on.
	const typedDay = text !== undefined ? ISO_LIKE.exec(text)?.[1] : undefined;
	if (typedDay !== undefined && parsed.toFormat('yyyy-MM-dd') !== typedDay) return undefined;
	return parsed.toMillis();
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
	options: FeedTimestampOptions,
): string {
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
		invalid(value, fieldName, options);
	}
	const milliseconds = toMilliseconds(value, options.timezone ?? 'UTC');
	if (milliseconds === undefined || !Number.isFinite(milliseconds))
		invalid(value, fieldName, options);
	const year = new Date(milliseconds).getUTCFullYear();
	if (Number.isNaN(year) || year < 1970 || year > 9999) invalid(value, fieldName, options);
	return formatFeedTimestamp(milliseconds);
}

/** An instant in the feed's form, `YYYY-MM-DDThh:mm:ssZ` (fractions of a second cut). */
export function formatFeedTimestamp(milliseconds: number): string {
	return `${new Date(Math.floor(milliseconds / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}
