/** Small pure helpers shared by every area of the sandbox: time notations, PRNG, tokens, query parsing. */
import { randomBytes } from 'node:crypto';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function parts(ms: number) {
	const d = new Date(ms);
	return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(
		d.getUTCMinutes(),
	)}:${pad(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DDThh:mm:ss+00:00`: report records, feed time fields, webhook created_at/updated_at. */
export const isoOffset = (ms: number) => `${parts(ms)}+00:00`;
/** `YYYY-MM-DDThh:mm:ssZ`: the feed's `lastupdated` (usable as `updatedSince`). */
export const isoZ = (ms: number) => `${parts(ms)}Z`;
/** `YYYY-MM-DDThh:mm:ss.uuuuuuZ`: bookmark created_at/updated_at (fractional seconds, Laravel style). */
export const isoMicrosZ = (ms: number) =>
	`${parts(ms)}.${pad(new Date(ms).getUTCMilliseconds(), 3)}000Z`;
/** `+00:00` form, or the empty string for an unset time (feed time fields are never null). */
export const isoOffsetOrEmpty = (ms: number | null | undefined) =>
	ms == null ? '' : isoOffset(ms);
export const unixSeconds = (ms: number) => Math.floor(ms / 1000);
export const floorToSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

const STRICT_Z = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
/** Parses the strict `YYYY-MM-DDThh:mm:ssZ` form only (real calendar dates); anything else is null. */
export function parseStrictZ(value: string): number | null {
	const m = STRICT_Z.exec(value);
	if (!m) return null;
	const ms = Date.parse(value);
	if (Number.isNaN(ms) || isoZ(ms) !== value) return null;
	return ms;
}

/** mulberry32: tiny deterministic PRNG, so demo data is identical on every start. */
export function prng(seed: number) {
	let a = seed >>> 0;
	const next = () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
		pick: <T>(arr: readonly T[]): T => arr[Math.floor(next() * arr.length)],
		chance: (p: number) => next() < p,
	};
}
export type Prng = ReturnType<typeof prng>;

export const randomToken = (prefix: string, bytes = 24) =>
	`${prefix}${randomBytes(bytes).toString('base64url')}`;

/** Boolean query parameters: enabled by `true` (any case) or `1`; anything else is false. */
export const isTrue = (v: string | null | undefined) =>
	v != null && (v.toLowerCase() === 'true' || v === '1');

/** Integer from a query string or JSON value; null when absent, NaN when present but not an integer. */
export function toInt(v: unknown): number | null {
	if (v === undefined || v === null || v === '') return null;
	if (typeof v === 'number') return Number.isInteger(v) ? v : NaN;
	if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v.trim());
	return NaN;
}

export const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
