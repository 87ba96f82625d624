/**
 * docs/layout.md's import rules, checked on the shipped source (every `import` and `export ... from`,
 * types included, read with TypeScript's parser):
 * - the core (nodes/shared) imports no node, and nodes and the credential reach it only through
 *   its faces (transport, helpers, methods, descriptions);
 * - nothing outside nodes/LearningPlatform imports from it;
 * - the webhook trigger's three rooms (subscription, deliveries, recovery) reach each other only
 *   through a room's face (its index.ts), never up into the node's own files; the floor file at
 *   the trigger's root (staticData.ts) imports no room; the node file imports each
 *   room through its face.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const TRIGGER = path.join(ROOT, 'nodes', 'LearningPlatformTrigger');
const ROOMS = ['subscription', 'deliveries', 'recovery'];
const FLOOR = ['staticData.ts'];
const CORE_FACES = ['transport', 'helpers', 'methods', 'descriptions'].map((face) =>
	path.join(ROOT, 'nodes', 'shared', face),
);

function tsFiles(dir: string): string[] {
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) return tsFiles(full);
		return entry.name.endsWith('.ts') ? [full] : [];
	});
}

/** The files `file` imports from within the repository, as absolute paths without extension. */
function localImports(file: string): string[] {
	const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
	const specifiers: string[] = [];
	for (const statement of source.statements) {
		const from =
			(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
			statement.moduleSpecifier;
		if (from && ts.isStringLiteral(from) && from.text.startsWith('.')) specifiers.push(from.text);
	}
	return specifiers.map((specifier) => path.resolve(path.dirname(file), specifier));
}

const shipped = [
	...tsFiles(path.join(ROOT, 'nodes')),
	...tsFiles(path.join(ROOT, 'credentials')),
].map((file) => ({ file, name: path.relative(ROOT, file), imports: localImports(file) }));

const inside = (target: string, dir: string) => target === dir || target.startsWith(dir + path.sep);
const roomOf = (file: string) =>
	ROOMS.find((room) => inside(file, path.join(TRIGGER, room))) ?? undefined;

describe('the import rules of docs/layout.md', () => {
	test('the parser sees the imports (a rule over no imports would pass anything)', () => {
		const node = shipped.find((f) => f.name.endsWith('LearningPlatformTrigger.node.ts'));
		expect(node?.imports).toEqual(
			expect.arrayContaining(ROOMS.map((room) => path.join(TRIGGER, room))),
		);
	});

	test('the core imports no node; nodes and the credential reach the core through its faces', () => {
		const broken: string[] = [];
		const shared = path.join(ROOT, 'nodes', 'shared');
		for (const { file, name, imports } of shipped) {
			const inCore = inside(file, shared);
			for (const target of imports) {
				if (inCore && !inside(target, shared)) broken.push(`${name} -> ${target}`);
				if (!inCore && inside(target, shared) && !CORE_FACES.includes(target))
					broken.push(`${name} -> ${path.relative(ROOT, target)}`);
			}
		}
		expect(broken).toEqual([]);
	});

	test('only the action node imports from its folder', () => {
		const actionNode = path.join(ROOT, 'nodes', 'LearningPlatform');
		const broken = shipped
			.filter(({ file }) => !inside(file, actionNode))
			.flatMap(({ name, imports }) =>
				imports.filter((t) => inside(t, actionNode)).map((t) => `${name} -> ${t}`),
			);
		expect(broken).toEqual([]);
	});

	test("the trigger's rooms meet only at their faces, and nothing points back up", () => {
		const broken: string[] = [];
		for (const { file, name, imports } of shipped.filter((f) => inside(f.file, TRIGGER))) {
			const room = roomOf(file);
			const floor = FLOOR.includes(path.relative(TRIGGER, file));
			for (const target of imports.filter((t) => inside(t, TRIGGER))) {
				const targetRoom = roomOf(target);
				const face = targetRoom !== undefined && target === path.join(TRIGGER, targetRoom);
				const targetIsFloor = FLOOR.includes(path.relative(TRIGGER, target) + '.ts');
				if (floor && !targetIsFloor) broken.push(`${name}: the floor imports ${target}`);
				else if (room !== undefined && targetRoom === undefined && !targetIsFloor)
					broken.push(`${name}: a room imports the node's own ${path.relative(TRIGGER, target)}`);
				else if (targetRoom !== undefined && targetRoom !== room && !face)
					broken.push(`${name}: into ${path.relative(TRIGGER, target)}, not ${targetRoom}'s face`);
			}
		}
		expect(broken).toEqual([]);
	});
});
