/** The delivery ledger's stored text: what is written is read back, to the minute. */
import {
	entryText,
	groupsText,
	ledgerText,
	parseLedgerText,
} from '../../nodes/LearningPlatformTrigger/deliveries/ledgerText';

const minute = 29_000_000; // Unix minutes, in 2025
const key = (name: string) => `${name}________`.slice(0, 8);

test('writer, minute groups and own entry read back; each counts from the last second of its minute', () => {
	const shared = new Map([
		[key('b'), minute * 60 + 70], // the next minute
		[key('a'), minute * 60 + 5],
		[key('c'), minute * 60 + 10],
	]);
	const text = ledgerText(
		{ tag: 'tag1', at: 1_740_000_000_123 },
		groupsText(shared),
		entryText(key('own'), minute * 60 + 130),
	);
	// one group per minute, oldest first, keys with nothing between them
	expect(text).toBe(
		`~tag1.${(1_740_000_000_123).toString(36)} ${minute.toString(36)};${key('a')}${key('c')} ${(minute + 1).toString(36)};${key('b')} ${(minute + 2).toString(36)};${key('own')}`,
	);
	const { writer, deliveries } = parseLedgerText(text);
	expect(writer).toEqual({ tag: 'tag1', at: 1_740_000_000_123 });
	expect([...deliveries]).toEqual([
		[key('a'), minute * 60 + 59],
		[key('c'), minute * 60 + 59],
		[key('b'), (minute + 1) * 60 + 59],
		[key('own'), (minute + 2) * 60 + 59],
	]);
});

test('no text yet (or not a text) holds nothing; an empty list of groups writes none', () => {
	expect(parseLedgerText(undefined)).toEqual({ deliveries: new Map() });
	expect(parseLedgerText({ [key('a')]: 1 })).toEqual({ deliveries: new Map() });
	expect(ledgerText({ tag: 't', at: 35 }, groupsText(new Map()), entryText(key('a'), 60))).toBe(
		`~t.z 1;${key('a')}`,
	);
});

test("a text saved by version 1.0.0 (12-character keys after ':') reads as today's keys, their first 8 characters", () => {
	const earlier = `~old.${(1_740_000_000_000).toString(36)} ${minute.toString(36)}:abcdefghijklABCDEFGHIJKL ${(minute + 1).toString(36)}:mnopqrstuvwx`;
	const { writer, deliveries } = parseLedgerText(earlier);
	expect(writer).toEqual({ tag: 'old', at: 1_740_000_000_000 });
	expect([...deliveries]).toEqual([
		['abcdefgh', minute * 60 + 59],
		['ABCDEFGH', minute * 60 + 59],
		['mnopqrst', (minute + 1) * 60 + 59],
	]);
	// and once rewritten, in today's form, beside a new delivery
	const rewritten = ledgerText(
		{ tag: 'new', at: 1_740_000_060_000 },
		groupsText(deliveries),
		entryText('newkey00', minute * 60 + 130),
	);
	expect(parseLedgerText(rewritten).deliveries).toEqual(
		new Map([...deliveries, ['newkey00', (minute + 2) * 60 + 59]]),
	);
	expect(rewritten).not.toContain(':');
});
