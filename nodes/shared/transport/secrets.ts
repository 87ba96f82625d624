// Secrets never reach an error, a log line or an output item: every text and object the transport
// hands out passes through here first.
import type { IDataObject } from 'n8n-workflow';

const SECRET_KEYS = [
	'signing_key',
	'signingKey',
	'auth_token',
	'authToken',
	'api_key',
	'apiKey',
	'refresh_token',
	'refreshToken',
	'access_token',
	'password',
	'secret',
];
const SECRET_KEY_SET = new Set(SECRET_KEYS.map((key) => key.toLowerCase()));
const REDACTED = '[redacted]';
/** "key": "value" / key=value / key: value */
const KEY_VALUE = new RegExp(
	`((?:"|')?(?:${SECRET_KEYS.join('|')})(?:"|')?\\s*[:=]\\s*)("[^"]*"|'[^']*'|[^\\s,&;}\\]]+)`,
	'gi',
);
const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;
// a one-character field value must not blank out a whole message
const MIN_SECRET_LENGTH = 6;

/**
 * Removes every known secret value, bearer credential and `key: value` pair whose key names a
 * secret. `secrets` are exact values to remove wherever they occur.
 */
export function scrubSecrets(text: string, secrets: Array<string | undefined | null> = []): string {
	let out = String(text);
	const values = secrets
		.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH)
		.sort((a, b) => b.length - a.length);
	for (const value of values) out = out.split(value).join(REDACTED);
	out = out.replace(BEARER, `$1 ${REDACTED}`);
	out = out.replace(KEY_VALUE, (_m, prefix: string, value: string) => {
		if (value === 'null' || value === '""' || value === "''") return `${prefix}${value}`;
		const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
		return `${prefix}${quote}${REDACTED}${quote}`;
	});
	return out;
}

/** Deep copy of a JSON value with secret-named keys and known secret values removed. */
export function scrubObject<T>(value: T, secrets: Array<string | undefined | null> = []): T {
	const walk = (v: unknown, depth: number): unknown => {
		if (depth > 20) return undefined;
		if (typeof v === 'string') return scrubSecrets(v, secrets);
		if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
		if (v && typeof v === 'object') {
			const out: IDataObject = {};
			for (const [k, x] of Object.entries(v)) {
				out[k] =
					SECRET_KEY_SET.has(k.toLowerCase()) && x !== null && x !== ''
						? REDACTED
						: (walk(x, depth + 1) as IDataObject);
			}
			return out;
		}
		return v;
	};
	return walk(value, 0) as T;
}
