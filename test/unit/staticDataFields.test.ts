/**
 * The webhook trigger's static data is declared in one file (nodes/LearningPlatformTrigger/
 * staticData.ts): each field's owner room and stored form. n8n saves the field whole with every
 * delivery, so a field written from two places, or one nobody declared, is how a last-writer-wins
 * save loses data unnoticed. The source is read as it ships.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import {
	STATIC_DATA_FIELDS,
	type StaticDataField,
} from '../../nodes/LearningPlatformTrigger/staticData';

const TRIGGER = path.join(__dirname, '..', '..', 'nodes', 'LearningPlatformTrigger');

function shippedFiles(dir: string): string[] {
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) return shippedFiles(full);
		return entry.name.endsWith('.ts') ? [full] : [];
	});
}

/** The code without its comments, which may name the fields and files freely. */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

const files = shippedFiles(TRIGGER).map((file) => ({
	file: path.relative(TRIGGER, file),
	room: path.relative(TRIGGER, file).split(path.sep)[0],
	text: codeOf(fs.readFileSync(file, 'utf8')),
}));

/** The fields a file names as written or cleared (`writeField(x, 'field'`, `clearField(x, 'field'`). */
function literalWrites(text: string): string[] {
	return [...text.matchAll(/\b(?:writeField|clearField)\(\s*[\w.]+,\s*'(\w+)'/g)].map((m) => m[1]);
}

describe("the webhook trigger's static data", () => {
	test('every field names its owner, one of the three rooms, and its stored form', () => {
		for (const [field, { owner, form }] of Object.entries(STATIC_DATA_FIELDS)) {
			expect({ field, ownerIsRoom: fs.existsSync(path.join(TRIGGER, owner)) }).toEqual({
				field,
				ownerIsRoom: true,
			});
			expect(form.length).toBeGreaterThan(10);
		}
	});

	test("a field is written only by its owner's room, by name through staticData.ts", () => {
		const misplaced: string[] = [];
		for (const { file, room, text } of files) {
			for (const field of literalWrites(text)) {
				const declared = STATIC_DATA_FIELDS[field as StaticDataField];
				if (!declared) misplaced.push(`${file} writes the undeclared field ${field}`);
				else if (declared.owner !== room)
					misplaced.push(`${file} writes ${field}, owned by ${declared.owner}`);
			}
		}
		expect(misplaced).toEqual([]);
		// the subscription's fields are stored by name from StoredSubscription's keys
		const subscriptionWrites = files.filter(({ text }) => /writeField\(\s*\w+,\s*key\b/.test(text));
		expect(subscriptionWrites.map(({ room }) => room)).toEqual(['subscription']);
	});

	test('no shipped file but staticData.ts indexes static data itself', () => {
		const direct = files
			.filter(({ file }) => file !== 'staticData.ts')
			.filter(({ text }) => /[sS]taticData(?:\(\s*'node'\s*\))?\s*(?:\[|\.(?!\w+\())/.test(text))
			.map(({ file }) => file);
		expect(direct).toEqual([]);
	});
});
