// The editor as a person meets it: real n8n 2.40.7 with the packed package and the demo, driven in
// headless Chromium (Debian's package, installed by the harness when missing) by playwright-core.
// Logs in as the owner, opens the bulk-bookmark demo, opens a Learning Platform node, checks its
// fields, runs it with "Execute step" and reads the records in the output panel; opens the
// credential dialog and the webhook trigger's panel; sends one message in the HR assistant's chat
// panel (AI Agent with the package's tools on the sandbox's scripted model) and reads the answer. Waits are on elements, with time-outs
// stretched by how slowly n8n started (never fixed sleeps). A failing step leaves a screenshot
// and the page's HTML in the stack's logs folder, which is then kept. Along the way it saves the
// README's pictures into docs/images/ (PNG, each cropped to the panel that matters, at twice the
// pixels when narrow), so a change in what a user sees shows up in review as a changed image. The
// pictures show the product, not the test bench: the credential has a user's name, no toast is
// open, no node shows a warning (asserted), the recipe's Google Sheets step is set up as the
// README says, and the trigger's Options show that missed deliveries are recovered.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import {
	DEFAULT_OWNER,
	demoWorkflows,
	HR_ASSISTANT,
	installDemo,
	log,
	REPO_ROOT,
	scaled,
} from '../../../scripts/n8n';
import { launchChromium } from '../../../scripts/n8n/browser';
import type { StackContext } from '../helpers';

const BOOKMARK_WORKFLOW = 'LpDemoBookmarks0';
const COMPLETION_WORKFLOW = 'LpDemoCompletion';
const FEED_NODE = 'Learners of course 101';
const TRIGGER_NODE = 'Course completed';
const RECIPE_WORKFLOW = 'LpDemoSheets0000';
/** The demo credential's name in the pictures: one a user would give it, not "(sandbox)". */
const CREDENTIAL_NAME = 'Learning Platform account';
/** A Google Sheets credential for the recipe's picture (never used: the recipe is not run). */
const SHEETS_CREDENTIAL = {
	id: 'LpPictureSheets0',
	name: 'Google Sheets account',
	type: 'googleSheetsOAuth2Api',
	data: {
		clientId: 'picture.apps.googleusercontent.com',
		clientSecret: 'picture',
		oauthTokenData: { access_token: 'picture', refresh_token: 'picture', token_type: 'Bearer' },
	},
};
/** Narrower pictures than this (CSS px) are saved at the device's 2 pixels per CSS pixel. */
const SHARP_UP_TO = 600;

interface Area {
	x: number;
	y: number;
	width: number;
	height: number;
}
/** Where the README's pictures live; `LP_SCREENSHOT_DIR` writes them elsewhere. */
const SCREENSHOT_DIR = process.env.LP_SCREENSHOT_DIR ?? path.join(REPO_ROOT, 'docs', 'images');

export function browserSuite(ctx: StackContext): void {
	describe('the editor in a real browser', () => {
		let browser: Browser | undefined;
		let context: BrowserContext;
		let page: Page;
		const started = Date.now();
		const timings: string[] = [];

		/** A wait for an element: generous, and longer when n8n started slowly on this machine. */
		const t = (ms: number) => scaled(ms);

		function nodeOnCanvas(name: string): Locator {
			return page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
		}

		/** Runs one part of a test; on failure keeps a screenshot and the HTML in the stack's logs. */
		async function part(name: string, fn: () => Promise<void>): Promise<void> {
			const t0 = Date.now();
			try {
				await fn();
				timings.push(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
			} catch (error) {
				const dir = path.join(ctx.stack.workDir, 'logs', 'browser');
				fs.mkdirSync(dir, { recursive: true });
				const base = path.join(dir, `${Date.now()}-${name.replace(/[^a-z0-9]+/gi, '-')}`);
				await page?.screenshot({ path: `${base}.png`, fullPage: true }).catch(() => undefined);
				await fs.promises
					.writeFile(`${base}.html`, (await page?.content().catch(() => '')) ?? '')
					.catch(() => undefined);
				log(
					`browser test: "${name}" failed after ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshot ${base}.png`,
				);
				// the test fails, so the work folder (screenshots, n8n's logs) is kept
				throw error;
			}
		}

		/**
		 * The area around some elements, `pad` CSS px wider on each side (`[top, right, bottom, left]`),
		 * kept inside the window.
		 */
		async function around(
			locators: Locator[],
			pad: [number, number, number, number] = [0, 0, 0, 0],
		): Promise<Area> {
			const boxes: Area[] = [];
			for (const locator of locators) {
				const box = await locator.boundingBox();
				if (box) boxes.push(box);
			}
			if (!boxes.length) throw new Error('none of the pictured elements is on the page');
			const view = page.viewportSize()!;
			const left = Math.max(0, Math.min(...boxes.map((b) => b.x)) - pad[3]);
			const top = Math.max(0, Math.min(...boxes.map((b) => b.y)) - pad[0]);
			const right = Math.min(view.width, Math.max(...boxes.map((b) => b.x + b.width)) + pad[1]);
			const bottom = Math.min(view.height, Math.max(...boxes.map((b) => b.y + b.height)) + pad[2]);
			return {
				x: Math.round(left),
				y: Math.round(top),
				width: Math.round(right - left),
				height: Math.round(bottom - top),
			};
		}

		/** Closes n8n's toasts ("Node executed successfully") and waits until none is on the page. */
		async function closeToasts(): Promise<void> {
			const toasts = page.locator('.el-notification');
			for (const close of await toasts.locator('.el-notification__closeBtn').all())
				await close.click({ timeout: t(5_000) }).catch(() => undefined);
			await page.waitForFunction(
				"[...document.querySelectorAll('.el-notification')].every((toast) => !toast.checkVisibility())",
				undefined,
				{ timeout: t(30_000) },
			);
		}

		/** No node on the canvas shows n8n's warning triangle (missing credential or parameter). */
		async function expectNoNodeIssues(): Promise<void> {
			// issues are computed once the workflow and the credentials are loaded
			await page
				.getByTestId('node-issues')
				.first()
				.waitFor({ state: 'detached', timeout: t(30_000) });
			expect(await page.getByTestId('node-issues').count()).toBe(0);
		}

		/**
		 * Saves `area` of what the page shows now as a README picture (after `closeToasts`: none is
		 * open). A picture is documentation, not a check: failing to write one is logged, never a
		 * test failure.
		 */
		async function picture(name: string, area: Area): Promise<void> {
			const file = path.join(SCREENSHOT_DIR, `${name}.png`);
			try {
				fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
				// let the canvas finish its fit-to-view and the panels their transitions
				await page.waitForTimeout(750);
				await page.screenshot({
					path: file,
					type: 'png',
					clip: area,
					scale: area.width <= SHARP_UP_TO ? 'device' : 'css',
				});
				log(`browser test: picture ${file} (${Math.round(fs.statSync(file).size / 1024)} KB)`);
			} catch (error) {
				log(`browser test: picture ${file} not saved: ${(error as Error).message}`);
			}
		}

		/** The canvas's nodes with their names and subtitles, the + after the last and the ⚡ before the first. */
		async function canvasArea(): Promise<Area> {
			return await around(
				await page.locator('[data-test-id="canvas-node"]').all(),
				[30, 96, 70, 60],
			);
		}

		async function openWorkflow(id: string): Promise<void> {
			await page.goto(`${ctx.stack.client.baseUrl}/workflow/${id}`);
			await page
				.locator('[data-test-id="canvas-node"]')
				.first()
				.waitFor({ timeout: t(90_000) });
		}

		async function openNode(name: string): Promise<Locator> {
			const node = nodeOnCanvas(name);
			await node.waitFor({ timeout: t(60_000) });
			await node.dblclick();
			const ndv = page.getByTestId('ndv');
			await ndv.waitFor({ timeout: t(60_000) });
			return ndv;
		}

		async function closeNode(): Promise<void> {
			const ndv = page.getByTestId('ndv');
			await page.keyboard.press('Escape');
			try {
				await ndv.waitFor({ state: 'hidden', timeout: t(10_000) });
			} catch {
				// a field that keeps the focus (a select just used) takes the Escape
				await page.getByTestId('ndv-close-button').first().click();
				await ndv.waitFor({ state: 'hidden', timeout: t(30_000) });
			}
		}

		beforeAll(async () => {
			await installDemo(ctx.stack, {
				apiStateExisted: false,
				credentialName: CREDENTIAL_NAME,
				moreCredentials: [SHEETS_CREDENTIAL],
			});
			browser = await launchChromium();
			// n8n marks its elements with data-test-id (playwright's default is data-testid)
			const { selectors } = await import('playwright-core');
			selectors.setTestIdAttribute('data-test-id');
			// The chat panel posts to n8n's webhook URL, the TLS front with this run's throwaway CA
			// (which the sandbox trusts the same way); the browser has no way to know that CA.
			context = await browser.newContext({
				// the README's pictures are cut from this window, at 2 pixels per CSS pixel when narrow
				viewport: { width: 1280, height: 800 },
				deviceScaleFactor: 2,
				ignoreHTTPSErrors: true,
			});
			context.setDefaultTimeout(t(60_000));
			page = await context.newPage();
			// leaving a workflow with an option added for a picture asks "leave the page?": yes
			page.on('dialog', (dialog) => void dialog.accept().catch(() => undefined));
		}, 900_000);

		afterAll(async () => {
			await browser?.close().catch(() => undefined);
			log(
				`browser test: ${((Date.now() - started) / 1000).toFixed(0)} s in all (stack start included); parts:\n  ${timings.join('\n  ')}`,
			);
		}, 120_000);

		test('the owner logs in, runs a Learning Platform node and sees its records', async () => {
			await part('log in', async () => {
				await page.goto(`${ctx.stack.client.baseUrl}/signin`);
				await page
					.locator('input[name="emailOrLdapLoginId"]')
					.fill(DEFAULT_OWNER.email, { timeout: t(90_000) });
				await page.locator('input[name="password"]').fill(DEFAULT_OWNER.password);
				await page.getByTestId('form-submit-button').click();
				await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: t(60_000) });
			});

			let ndv!: Locator;
			await part('open the bulk-bookmark demo and its feed node', async () => {
				await openWorkflow(BOOKMARK_WORKFLOW);
				await expectVisible(nodeOnCanvas('Bookmark course 102'));
				await expectNoNodeIssues();
				await closeToasts();
				await picture('bulk-bookmark-canvas', await canvasArea());
				ndv = await openNode(FEED_NODE);
			});

			await part("the operation's fields", async () => {
				const parameters = ndv.getByTestId('node-parameters');
				for (const label of ['Resource', 'Operation', 'Return All', 'Filters']) {
					await expectVisible(parameters.getByText(label, { exact: true }).first());
				}
				// the values the demo set, as the editor names them
				await expectVisible(parameters.locator('input[type="text"]').first());
				await expectVisible(ndv.getByTestId('node-credentials-select').first());
				// the credential as a user would have named it, Simplify on (its default)
				await expectCredentialName(ndv);
				await expectVisible(switchOn(parameters, 'Simplify'));
			});

			await part('execute step and read the output panel', async () => {
				await ndv.getByTestId('node-execute-button').first().click();
				const output = ndv.getByTestId('output-panel');
				const count = output.getByTestId('ndv-items-count');
				await expectVisible(count, t(180_000));
				const text = (await count.innerText()).replace(/\s+/g, ' ');
				const items = Number(/(\d+)\s+items?/.exec(text)?.[1] ?? '0');
				expect(items).toBeGreaterThan(0);
				// the records themselves: the feed's fields are shown as column headers or keys
				await expectVisible(output.getByText('completionid').first());
				await expectVisible(output.getByText('username').first());
				// "Node executed successfully" would cover the table
				await closeToasts();
				// the parameters (credential, operation, Simplify) beside the records they gave, without
				// the buttons on the panel's right edge
				await picture(
					'action-output',
					await around([ndv.getByTestId('node-parameters'), output], [0, -30, 0, 0]),
				);
			});

			await part('the credential dialog', async () => {
				await ndv.getByTestId('credential-edit-button').first().click();
				const dialog = page.getByTestId('credential-edit-dialog');
				await expectVisible(dialog);
				// required fields are labelled "Base URL *"
				for (const label of ['Base URL', 'Tenancy ID', 'API Username', 'Refresh Token']) {
					await expectVisible(dialog.getByText(new RegExp(`^${label}\\b`)).first());
				}
				await page.keyboard.press('Escape');
				try {
					await dialog.waitFor({ state: 'hidden', timeout: t(15_000) });
				} catch {
					await page.getByRole('button', { name: 'Close this dialog' }).last().click();
					await dialog.waitFor({ state: 'hidden', timeout: t(30_000) });
				}
				await closeNode();
			});
		});

		test("the webhook trigger's panel", async () => {
			await part("open the completion demo's trigger", async () => {
				await openWorkflow(COMPLETION_WORKFLOW);
				// the canvas names the event for people, not as the cut-off Events\Courses\Completion_...
				await expectVisible(nodeOnCanvas(TRIGGER_NODE).getByText('Course completion created'));
				const ndv = await openNode(TRIGGER_NODE);
				const parameters = ndv.getByTestId('node-parameters');
				await expectVisible(parameters.getByText('Event', { exact: true }).first());
				await expectCredentialName(ndv);
				// the select shows the chosen option's name (its list item is marked selected)
				await page
					.locator('[role="option"][aria-selected="true"]')
					.filter({ hasText: 'Course: Completion Created' })
					.first()
					.waitFor({ state: 'attached', timeout: t(60_000) });
				// the HTTPS advice is a quiet hint under Event that points at the Webhook URLs, not an orange warning
				await expectVisible(
					parameters.getByText(/check that the Webhook URLs above start with https/).first(),
				);
				// missed deliveries are recovered unless turned off: the option shows it once added
				const options = parameters.getByTestId('collection-parameter-add').first();
				await options.click();
				await page
					.getByTestId('collection-parameter-option')
					.filter({ hasText: 'Recover Missed Deliveries' })
					.first()
					.click();
				await expectVisible(switchOn(parameters, 'Recover Missed Deliveries'));
				await closeToasts();
				// the panel with its tabs, down to the options
				const panel = await around([parameters], [44, 16, 0, 16]);
				const end = await around([options], [0, 0, 20, 0]);
				await picture('trigger-panel', { ...panel, height: end.y + end.height - panel.y });
				await closeNode();
			});
		});

		test('the first-workflow recipe on the canvas', async () => {
			await part('open the recipe: course completed → a row in Google Sheets', async () => {
				// set up as the README says: a Google Sheets credential, the spreadsheet and the sheet
				// (in a copy: the demo's recipe stays as shipped)
				const recipe = demoWorkflows().find((w) => w.id === RECIPE_WORKFLOW)!;
				const nodes = (recipe.nodes as Array<Record<string, unknown>>).map((node) =>
					node.type !== 'n8n-nodes-base.googleSheets'
						? { ...node, webhookId: undefined }
						: {
								...node,
								parameters: {
									...(node.parameters as object),
									documentId: {
										__rl: true,
										mode: 'url',
										value:
											'https://docs.google.com/spreadsheets/d/1LpCourseCompletions0000000000000000000000/edit',
									},
									sheetName: {
										__rl: true,
										mode: 'list',
										value: 'gid=0',
										cachedResultName: 'Completions',
									},
								},
								credentials: {
									googleSheetsOAuth2Api: { id: SHEETS_CREDENTIAL.id, name: SHEETS_CREDENTIAL.name },
								},
							},
				);
				const copy = await ctx.client.createWorkflow({ ...recipe, nodes });
				await openWorkflow(copy.id);
				await expectVisible(nodeOnCanvas(TRIGGER_NODE));
				await expectVisible(nodeOnCanvas('Add or update row'));
				await expectNoNodeIssues();
				await closeToasts();
				await picture('recipe-canvas', await canvasArea());
			});
		});

		test("the node picker finds the trigger's events by name and tells the two triggers apart", async () => {
			await part('search the node picker', async () => {
				// a new workflow's first step: the picker lists triggers (after a node it lists actions only)
				await page.goto(`${ctx.stack.client.baseUrl}/workflow/new`);
				await page
					.getByTestId('canvas-add-button')
					.first()
					.click({ timeout: t(90_000) });
				const creator = page.getByTestId('node-creator');
				await expectVisible(creator);
				await creator.getByTestId('node-creator-search-bar').first().fill('course completion');
				const names = creator.getByTestId('node-creator-item-name');
				await expectVisible(
					names.filter({ hasText: /^Learning Platform Completion Trigger$/ }).first(),
				);
				const app = names.filter({ hasText: /^Learning Platform$/ }).first();
				await expectVisible(app);
				// each trigger says how it differs
				await expectVisible(creator.getByText(/pushes an event/).first());
				await app.click();
				await expectVisible(
					creator.getByText('On course completion created', { exact: true }).first(),
				);
				await expectVisible(
					creator.getByText('On quiz attempt completed', { exact: true }).first(),
				);
				await page.keyboard.press('Escape');
			});
		});

		test("the HR assistant answers in the editor's chat panel, using the package's tools", async () => {
			const control = ctx.stack.sandbox!.control;
			await control.clearChatRequests();
			const question = 'Which activities has learner 23 completed?';
			await part('open the HR assistant and its chat panel', async () => {
				await openWorkflow(HR_ASSISTANT.workflowId);
				await page.getByTestId('workflow-chat-button').first().click();
				await expectVisible(page.getByTestId('canvas-chat'));
			});
			await part('send a message and see the answer', async () => {
				const chat = page.getByTestId('canvas-chat');
				const input = chat.locator('textarea[data-test-id="chat-input"]');
				await input.fill(question);
				await input.press('Enter');
				// the scripted model answers from the tool result: "Learner 23 has <n> activity completions: ..."
				const answer = chat.getByText(/^Learner 23 has \d+ activity completions/).first();
				await expectVisible(answer, t(240_000));
				const requests = await control.chatRequests();
				const last = requests.at(-1)!;
				expect(last.reply?.kind).toBe('text');
				expect((await answer.innerText()).trim()).toBe(
					last.reply?.kind === 'text' ? last.reply.text : '',
				);
				// the model was asked first, called the tool, and got its result back
				expect(requests[0].turns.at(-1)).toEqual({ role: 'user', text: question });
				expect(last.turns.some((turn) => turn.role === 'tool')).toBe(true);
				// no "Workflow executed successfully" toast in the picture
				await closeToasts();
				// the question and the answer: the panel taller and the chat wider than n8n opens them
				const logs = page.getByTestId('logs-panel');
				await drag(logs.locator('[data-test-id="resize-handle"][data-dir="top"]').first(), 0, -200);
				await drag(
					logs.locator('[data-test-id="resize-handle"][data-dir="right"]').first(),
					130,
					0,
				);
				// below the header, whose session id changes with every run
				const whole = await around([chat]);
				const body = chat.getByTestId('canvas-chat-body');
				const top = (await body.count()) ? (await around([body])).y : whole.y;
				await picture('hr-assistant-chat', {
					...whole,
					y: top,
					height: whole.y + whole.height - top,
				});
			});
		});

		/** Drags a resize handle by (dx, dy) CSS px, for a picture; logged when the handle is not there. */
		async function drag(handle: Locator, dx: number, dy: number): Promise<void> {
			const box = await handle.boundingBox({ timeout: t(10_000) }).catch(() => null);
			if (!box) {
				log('browser test: no resize handle to drag for the picture');
				return;
			}
			const x = box.x + box.width / 2;
			const y = box.y + box.height / 2;
			await page.mouse.move(x, y);
			await page.mouse.down();
			await page.mouse.move(x + dx, y + dy, { steps: 10 });
			await page.mouse.up();
		}

		/** The node's credential shows the name a user would give it. */
		async function expectCredentialName(ndv: Locator): Promise<void> {
			const credential = ndv.getByTestId('node-credentials-select').locator('input').first();
			await expectVisible(credential);
			expect(await credential.inputValue()).toBe(CREDENTIAL_NAME);
		}

		/** The switch of the boolean parameter labelled `label`, on. */
		function switchOn(parameters: Locator, label: string): Locator {
			return parameters
				.getByTestId('parameter-item')
				.filter({ has: page.getByText(label, { exact: true }) })
				.locator('.el-switch.is-checked, [role="switch"][aria-checked="true"]')
				.first();
		}

		async function expectVisible(locator: Locator, timeout = t(60_000)): Promise<void> {
			await locator.waitFor({ state: 'visible', timeout });
		}
	});
}
