/** The delivery ledger's stored text: what is written is read back, to its 10 minutes. */
import {
	entryText,
	groupsText,
	ledgerText,
	parseLedgerText,
} from '../../nodes/LearningPlatformTrigger/deliveries/ledgerText';

const period = 2_900_000; // Unix time in 10 minutes, in 2025
const minute = period * 10;
const key = (name: string) => `${name}________`.slice(0, 8);

test('writer, 10-minute groups and own entry read back; each counts from the last second of its period', () => {
	const shared = new Map([
		[key('b'), period * 600 + 700], // the next period
		[key('a'), period * 600 + 5],
		[key('c'), period * 600 + 590],
	]);
	const text = ledgerText(
		{ tag: 'tag1', at: 1_740_000_000_123 },
		groupsText(shared),
		entryText(key('own'), period * 600 + 1_300),
	);
	// one group per period, oldest first, keys with nothing between them
	expect(text).toBe(
		`~tag1.${(1_740_000_000_123).toString(36)} ${period.toString(36)};${key('a')}${key('c')} ${(period + 1).toString(36)};${key('b')} ${(period + 2).toString(36)};${key('own')}`,
	);
	const { writer, deliveries } = parseLedgerText(text);
	expect(writer).toEqual({ tag: 'tag1', at: 1_740_000_000_123 });
	expect([...deliveries]).toEqual([
		[key('a'), period * 600 + 599],
		[key('c'), period * 600 + 599],
		[key('b'), (period + 1) * 600 + 599],
		[key('own'), (period + 2) * 600 + 599],
	]);
});

test('no text yet (or not a text) holds nothing; an empty list of groups writes none', () => {
	expect(parseLedgerText(undefined)).toEqual({ deliveries: new Map() });
	expect(parseLedgerText({ [key('a')]: 1 })).toEqual({ deliveries: new Map() });
	expect(ledgerText({ tag: 't', at: 35 }, groupsText(new Map()), entryText(key('a'), 600))).toBe(
		`~t.z 1;${key('a')}`,
	);
});

test("a text saved by version 1.0.0 (minute groups, 12-character keys after ':') reads as today's keys, their first 8 characters", () => {
	const earlier = `~old.${(1_740_000_000_000).toString(36)} ${minute.toString(36)}:abcdefghijklABCDEFGHIJKL ${(minute + 1).toString(36)}:mnopqrstuvwx`;
	const { writer, deliveries } = parseLedgerText(earlier);
	expect(writer).toEqual({ tag: 'old', at: 1_740_000_000_000 });
	expect([...deliveries]).toEqual([
		['abcdefgh', minute * 60 + 59],
		['ABCDEFGH', minute * 60 + 59],
		['mnopqrst', (minute + 1) * 60 + 59],
	]);
	// rewritten in today's form beside a new delivery: each counts from its period's last second
	const rewritten = ledgerText(
		{ tag: 'new', at: 1_740_000_060_000 },
		groupsText(deliveries),
		entryText('newkey00', minute * 60 + 130),
	);
	expect(rewritten).toBe(
		`~new.${(1_740_000_060_000).toString(36)} ${period.toString(36)};abcdefghABCDEFGHmnopqrst ${period.toString(36)};newkey00`,
	);
	expect([...parseLedgerText(rewritten).deliveries]).toEqual(
		['abcdefgh', 'ABCDEFGH', 'mnopqrst', 'newkey00'].map((k) => [k, period * 600 + 599]),
	);
});
