// What recipes.test.ts needs beside n8n: a recipe file as a user imports it into the editor, the
// Google account and its spreadsheets (the stand-in, test/support/googleSheets/), clocks moved
// together, and the platform's records read one by one (what the feed holds).
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, type Stack, type WorkflowJson } from '../../scripts/n8n';
import type { GoogleSheetsStandIn } from '../support/googleSheets/standIn';
import type { DemoData } from './helpers';
import { TYPES } from './helpers';

export const SHEETS_TYPE = 'n8n-nodes-base.googleSheets';
export const GOOGLE_CREDENTIAL_TYPE = 'googleSheetsOAuth2Api';

/** The recipe files of demo/workflows that write to Google Sheets. */
export const RECIPE_FILES = {
	webhook: 'completion-to-google-sheets.json',
	poll: 'completion-poll-to-google-sheets.json',
	report: 'weekly-report-to-google-sheets.json',
	catchUp: 'catch-up-to-google-sheets.json',
} as const;
export type Recipe = keyof typeof RECIPE_FILES;

export function recipeFile(recipe: Recipe): WorkflowJson {
	return JSON.parse(
		fs.readFileSync(path.join(REPO_ROOT, 'demo', 'workflows', RECIPE_FILES[recipe]), 'utf8'),
	) as WorkflowJson;
}

/** The header row of a Sheets step as the recipe maps it (the README's "first row"). */
export function headerOf(workflow: WorkflowJson, nodeName: string): string[] {
	const node = workflow.nodes.find((n) => n.name === nodeName);
	const value = (node?.parameters as { columns?: { value?: Record<string, string> } } | undefined)
		?.columns?.value;
	if (!value) throw new Error(`${workflow.name}: no column mapping on ${nodeName}`);
	return Object.keys(value);
}

export interface SheetChoice {
	spreadsheetId: string;
	tab: string;
}

/**
 * A recipe as a user sets it up after "Import from File", done in memory only: the editor gives a
 * webhook trigger a fresh webhook id (the file pins none); the user picks their Learning Platform
 * and Google Sheets credentials, and each Sheets step's spreadsheet (by its URL) and sheet (from the
 * list). Everything else is as in the file; `edit` changes a node's parameters as the user would.
 */
export function asImported(
	recipe: Recipe,
	choices: {
		learningPlatform: string;
		google: string;
		sheets: Record<string, SheetChoice>;
		standIn: GoogleSheetsStandIn;
		edit?: Record<string, (parameters: Record<string, unknown>) => Record<string, unknown>>;
	},
): WorkflowJson {
	const workflow = recipeFile(recipe);
	const nodes = workflow.nodes.map((node) => {
		const out: Record<string, unknown> = { ...node };
		if (node.credentials)
			out.credentials = {
				[TYPES.credential]: { id: choices.learningPlatform, name: 'Learning Platform account' },
			};
		if (node.type === TYPES.trigger) out.webhookId = randomUUID();
		if (node.type === SHEETS_TYPE) {
			const choice = choices.sheets[String(node.name)];
			if (!choice) throw new Error(`${RECIPE_FILES[recipe]}: no sheet chosen for ${node.name}`);
			const spreadsheet = choices.standIn.spreadsheets.get(choice.spreadsheetId)!;
			const sheet = spreadsheet.sheets.find((s) => s.title === choice.tab)!;
			out.credentials = {
				[GOOGLE_CREDENTIAL_TYPE]: { id: choices.google, name: 'Google Sheets account' },
			};
			out.parameters = {
				...(node.parameters as object),
				documentId: {
					__rl: true,
					mode: 'url',
					value: `https://docs.google.com/spreadsheets/d/${choice.spreadsheetId}/edit#gid=${sheet.sheetId}`,
				},
				sheetName: {
					__rl: true,
					mode: 'list',
					value: String(sheet.sheetId),
					cachedResultName: choice.tab,
				},
			};
		}
		const edit = choices.edit?.[String(node.name)];
		if (edit) out.parameters = edit({ ...(out.parameters as Record<string, unknown>) });
		return out;
	});
	return { ...workflow, nodes };
}

/** A Google Sheets credential holding the stand-in's access token (no expiry: used until a 401). */
export function googleCredential(id: string, token: string) {
	return {
		id,
		name: 'Google Sheets account',
		type: GOOGLE_CREDENTIAL_TYPE,
		data: {
			clientId: 'stand-in.apps.googleusercontent.com',
			clientSecret: 'stand-in',
			oauthTokenData: { access_token: token, token_type: 'Bearer', refresh_token: 'unused' },
		},
	};
}

export type FeedRecord = Record<string, unknown> & {
	completionid: number;
	userid: number;
	contentid: number;
	completionstatus: string;
	lastupdated: string;
	timecompleted: string;
};

/**
 * Every record the platform holds that its feed shows by default (completed, viewed or archived;
 * learner and content present), read one by one through the control API.
 */
export async function feedRecords(stack: Stack, demo: DemoData, fired: number[]) {
	const control = stack.sandbox!.control;
	const learners = new Set(demo.users.filter((u) => !u.deleted).map((u) => u.id));
	const contents = new Set(demo.content.filter((c) => !c.deleted).map((c) => c.id));
	const records: FeedRecord[] = [];
	// ids are a sequence from 1; a batch past the highest known
	const last = Math.max((await control.demo()).completions, ...fired) + 100;
	for (let id = 1; id <= last; id += 100) {
		const batch = await Promise.all(
			Array.from({ length: 100 }, (_, i) =>
				control
					.completion(id + i)
					.then((r) => r.completion as unknown as FeedRecord)
					.catch(() => undefined),
			),
		);
		for (const record of batch)
			if (
				record &&
				['Completed', 'Viewed', 'Archived'].includes(record.completionstatus) &&
				learners.has(record.userid) &&
				contents.has(record.contentid)
			)
				records.push(record);
	}
	return records;
}

/** A cell as the sheet shows it (text; numbers as Google writes them). */
export const shown = (value: unknown): string =>
	value === null || value === undefined ? '' : String(value);
