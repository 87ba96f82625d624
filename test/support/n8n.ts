/**
 * Runs our node types through n8n-core's real execution code (WorkflowExecute, ExecuteContext,
 * HookContext, WebhookContext, PollContext, LoadOptionsContext and the real
 * `httpRequestWithAuthentication`), with HTTP going to the sandbox on loopback.
 *
 * The one piece n8n-core does not ship is the credentials helper, which lives in n8n's CLI
 * package and talks to the database. `StoreCredentialsHelper` reproduces what n8n 2.40.7's
 * `CredentialsHelper` does on the paths our credential uses (see
 * node_modules/n8n/dist/credentials-helper.js in the n8n install): it decrypts by returning a
 * fresh copy of the stored data on every load, runs `preAuthentication` only when the expirable
 * property is empty or the caller saw a 401, and persists every returned key over the stored
 * data. The `CredentialStore` plays the database row, so tests can watch what would be saved and
 * can write to it as another n8n process would.
 */
import {
	ExecutionLifecycleHooks,
	HookContext,
	LoadOptionsContext,
	PollContext,
	WebhookContext,
	WorkflowExecute,
} from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	ICredentials,
	IDataObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypes,
	IRun,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	IWorkflowExecuteAdditionalData,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { ICredentialsHelper, Workflow, createRunExecutionData, isExpression } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../../nodes/shared/transport/config';
import { PACKAGE_NAME } from '../../nodes/shared/transport/version';

export { CREDENTIAL_TYPE, PACKAGE_NAME };
const CREDENTIAL_ID = 'test-credential';

/** The database row of one credential, as n8n would hold it. */
export class CredentialStore {
	private stored: ICredentialDataDecryptedObject;

	/** Every write n8n would have persisted, oldest first (copies). */
	readonly writes: ICredentialDataDecryptedObject[] = [];

	/** Writes under way (a slow database holds each for `writeDelayMs`). */
	writing = 0;

	/**
	 * `writeDelayMs`: how long each write by n8n takes before it is visible, like an UPDATE that
	 * waits on a busy or remote database (readers see the old row until it commits).
	 */
	constructor(
		data: ICredentialDataDecryptedObject,
		private readonly writeDelayMs = 0,
	) {
		this.stored = structuredClone(data);
	}

	/** What a fresh load from the database returns now. */
	get data(): ICredentialDataDecryptedObject {
		return structuredClone(this.stored);
	}

	/** A write by n8n itself (counted in `writes` when it commits). */
	async persist(data: ICredentialDataDecryptedObject): Promise<void> {
		const copy = structuredClone(data);
		this.writing++;
		try {
			if (this.writeDelayMs > 0) await new Promise((r) => setTimeout(r, this.writeDelayMs));
		} finally {
			this.writing--;
		}
		this.stored = copy;
		this.writes.push(structuredClone(copy));
	}

	/** A write made elsewhere: another n8n process, or a user saving the form. Not counted. */
	replace(data: ICredentialDataDecryptedObject) {
		this.stored = structuredClone(data);
	}
}

class StoreCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentialTypes: Record<string, ICredentialType>,
		private readonly store: CredentialStore | undefined,
	) {
		super();
	}

	private type(name: string) {
		const type = this.credentialTypes[name];
		if (!type) throw new Error(`Unknown credential type ${name}`);
		return type;
	}

	private requireStore() {
		if (!this.store) throw new Error('This test run has no credential store');
		return this.store;
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.type(type).properties;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const { authenticate } = this.type(typeName);
		if (typeof authenticate === 'function') return await authenticate(credentials, requestOptions);
		if (authenticate) throw new Error('The test helper supports function-style authenticate only');
		return requestOptions;
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.type(typeName);
		const expirable = credentialType.properties.find(
			(property) => property.type === 'hidden' && property.typeOptions?.expirable === true,
		);
		if (expirable === undefined || typeof credentialType.preAuthentication !== 'function')
			return undefined;
		if (credentials[expirable.name] !== '' && !credentialsExpired) return undefined;

		const output = await credentialType.preAuthentication.call(
			{ helpers: { httpRequest: helpers.helpers.httpRequest } } as IHttpRequestHelper,
			credentials,
		);
		if (output[expirable.name] === undefined) return undefined;
		if (node.credentials) {
			const store = this.requireStore();
			const storedData = store.data;
			const dataToPersist = { ...storedData };
			for (const [key, value] of Object.entries(output)) {
				if (key === expirable.name || !isExpression(storedData[key])) {
					dataToPersist[key] = value as ICredentialDataDecryptedObject[string];
				}
			}
			await store.persist(dataToPersist);
			return Object.assign(credentials, output) as ICredentialDataDecryptedObject;
		}
		return undefined;
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.type(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		return (await credentialType.preAuthentication.call(
			helpers,
			credentials,
		)) as ICredentialDataDecryptedObject;
	}

	async getCredentials(): Promise<ICredentials> {
		throw new Error('Not used by the test helper');
	}

	async getDecrypted(): Promise<ICredentialDataDecryptedObject> {
		return this.requireStore().data;
	}

	async updateCredentials(
		_nodeCredentials: INodeCredentialsDetails,
		_type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		await this.requireStore().persist(data);
	}

	async updateCredentialsOauthTokenData(): Promise<void> {}
}

class SingleNodeTypes implements INodeTypes {
	constructor(private readonly nodeType: INodeType) {}

	getByName(): INodeType {
		return this.nodeType;
	}

	getByNameAndVersion(): INodeType {
		return this.nodeType;
	}

	getKnownTypes() {
		return {};
	}
}

export interface RunContextOptions {
	parameters?: IDataObject;
	/** Omit for a node run without credentials. */
	credentials?: CredentialStore;
	/** The workflow's static data, e.g. `{ 'node:Learning Platform Trigger': {...} }`; mutated in place. */
	staticData?: IDataObject;
	webhookBaseUrl?: string;
	nodeName?: string;
	continueOnFail?: boolean;
	/** Distinct workflows have distinct ids (what the trigger keeps per process is keyed by it). */
	workflowId?: string;
}

function buildWorkflow(nodeType: INodeType, options: RunContextOptions) {
	const nodeName = options.nodeName ?? nodeType.description.displayName;
	const node: INode = {
		id: 'node-under-test',
		name: nodeName,
		type: `${PACKAGE_NAME}.${nodeType.description.name}`,
		typeVersion: Array.isArray(nodeType.description.version)
			? Math.max(...nodeType.description.version)
			: nodeType.description.version,
		position: [0, 0],
		webhookId: 'a3f2b1c0-0000-4000-8000-000000000001',
		parameters: (options.parameters ?? {}) as INode['parameters'],
		continueOnFail: options.continueOnFail ?? false,
	};
	if (options.credentials) {
		node.credentials = {
			[CREDENTIAL_TYPE]: { id: CREDENTIAL_ID, name: 'Learning Platform account' },
		};
	}
	const workflow = new Workflow({
		id: options.workflowId ?? 'workflow-under-test',
		name: 'Workflow under test',
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new SingleNodeTypes(nodeType),
		staticData: options.staticData ?? {},
	});
	// The workflow normalises parameters (defaults filled in) as n8n does on load.
	return { workflow, node: workflow.getNode(nodeName)! };
}

// Loaded lazily so that a run without credentials does not need the credential module.
function credentialTypes(): Record<string, ICredentialType> {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const { LearningPlatformApi } = require('../../credentials/LearningPlatformApi.credentials');
	return { [CREDENTIAL_TYPE]: new LearningPlatformApi() };
}

function buildAdditionalData(
	options: RunContextOptions,
	extra: Partial<IWorkflowExecuteAdditionalData> = {},
): IWorkflowExecuteAdditionalData {
	const credentialsHelper = new StoreCredentialsHelper(
		options.credentials ? credentialTypes() : {},
		options.credentials,
	);
	return {
		credentialsHelper,
		executionId: 'test-execution',
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		webhookBaseUrl: options.webhookBaseUrl ?? 'https://n8n.invalid/webhook',
		webhookWaitingBaseUrl: 'https://n8n.invalid/webhook-waiting',
		webhookTestBaseUrl: 'https://n8n.invalid/webhook-test',
		formWaitingBaseUrl: 'https://n8n.invalid/form-waiting',
		currentNodeParameters: undefined,
		variables: {},
		executeWorkflow: async () => {
			throw new Error('Sub-workflows are not available in tests');
		},
		getRunExecutionData: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('Task runners are not available in tests');
		},
		...extra,
	} as unknown as IWorkflowExecuteAdditionalData;
}

export interface ExecuteNodeOptions extends RunContextOptions {
	nodeType: INodeType;
	items?: INodeExecutionData[];
	mode?: WorkflowExecuteMode;
}

export interface ExecuteNodeResult {
	/** The node's outputs: `output[0]` is the main output's items. Empty when the node failed. */
	output: INodeExecutionData[][];
	/** The error the node threw (undefined on success or with continueOnFail). */
	error?: Error & { description?: string; httpCode?: string; context?: IDataObject };
	/** Execution hints the node added (`addExecutionHints`). */
	hints: Array<{ message: string; location?: string }>;
	run: IRun;
}

/** Runs one node over `items` in a real WorkflowExecute, as an n8n execution would. */
export async function executeNode(options: ExecuteNodeOptions): Promise<ExecuteNodeResult> {
	const { workflow, node } = buildWorkflow(options.nodeType, options);
	const mode = options.mode ?? 'manual';
	const hooks = new ExecutionLifecycleHooks(mode, 'test-execution', {
		id: workflow.id,
		name: workflow.name,
		nodes: [node],
		connections: {},
		active: false,
		activeVersionId: null,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
	} as never);
	let resolveRun: (run: IRun) => void = () => {};
	const finished = new Promise<IRun>((resolve) => (resolveRun = resolve));
	hooks.addHandler('workflowExecuteAfter', (run) => resolveRun(run));

	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [
				{ node, data: { main: [options.items ?? [{ json: {} }]] }, source: null },
			],
		},
	});

	const additionalData = buildAdditionalData(options, {
		hooks,
	} as Partial<IWorkflowExecuteAdditionalData>);
	const workflowExecute = new WorkflowExecute(additionalData, mode, runExecutionData);
	await workflowExecute.processRunExecutionData(workflow);
	const run = await finished;

	const taskData = run.data.resultData.runData[node.name]?.[0];
	const error = (taskData?.error ?? run.data.resultData.error) as ExecuteNodeResult['error'];
	const output = (taskData?.data?.main ?? []).map((items) => items ?? []);
	const hints = (taskData?.hints ?? []) as ExecuteNodeResult['hints'];
	return { output, error, hints, run };
}

/** The registration n8n hands to webhook code; a delivery carries no `isTest`, activation does. */
function buildWebhookData(
	workflow: Workflow,
	node: INode,
	additionalData: IWorkflowExecuteAdditionalData,
	webhookDescription: IWebhookDescription | undefined,
	httpMethod: IWebhookDescription['httpMethod'],
	isTest?: boolean,
): IWebhookData {
	return {
		httpMethod,
		node: node.name,
		path: 'lp-trigger',
		webhookDescription,
		workflowId: workflow.id,
		workflowExecuteAdditionalData: additionalData,
		webhookId: node.webhookId,
		...(isTest === undefined ? {} : { isTest }),
	} as unknown as IWebhookData;
}

export interface HookRunOptions extends RunContextOptions {
	mode?: WorkflowExecuteMode;
	activation?: WorkflowActivateMode;
	isTest?: boolean;
}

/** The context n8n's activation gives a webhook lifecycle method, for code that runs in it. */
export function hookContext(nodeType: INodeType, options: HookRunOptions): HookContext {
	return buildHookContext(nodeType, options).context;
}

function buildHookContext(nodeType: INodeType, options: HookRunOptions) {
	const { workflow, node } = buildWorkflow(nodeType, options);
	const additionalData = buildAdditionalData(options);
	const webhookDescription = nodeType.description.webhooks?.[0];
	if (!webhookDescription) throw new Error(`${nodeType.description.name} has no webhooks`);
	const webhookData = buildWebhookData(
		workflow,
		node,
		additionalData,
		webhookDescription,
		webhookDescription.httpMethod,
		options.isTest ?? false,
	);
	const context = new HookContext(
		workflow,
		node,
		additionalData,
		// n8n runs "Listen for test event" in mode `manual` (its TestWebhooks)
		options.mode ?? (options.isTest ? 'manual' : 'trigger'),
		options.activation ?? (options.isTest ? 'manual' : 'activate'),
		webhookData,
	);
	return { context, workflow };
}

/** Calls a webhook lifecycle method (`checkExists`, `create`, `delete`) as n8n's activation does. */
export async function runHook(
	nodeType: INodeType,
	method: 'checkExists' | 'create' | 'delete',
	options: HookRunOptions,
): Promise<{ result: boolean; staticData: IDataObject }> {
	const { context, workflow } = buildHookContext(nodeType, options);
	const hook = nodeType.webhookMethods?.default?.[method];
	if (!hook) throw new Error(`${nodeType.description.name} has no webhook method ${method}`);
	const result = await hook.call(context);
	return { result, staticData: workflow.staticData as IDataObject };
}

export interface WebhookRunOptions extends RunContextOptions {
	headers: Record<string, string>;
	rawBody: Buffer;
	mode?: WorkflowExecuteMode;
	/**
	 * What n8n does after `webhook()` returned (respond-immediately mode): `created` answers 200
	 * once the execution exists, `failed` answers 500 as when n8n could not create it, `later`
	 * leaves the response open (the caller answers with `answer`).
	 */
	n8nAnswer?: 'created' | 'failed' | 'later';
}

export interface RecordedResponse {
	statusCode: number;
	headers: Record<string, string>;
	body: string;
	ended: boolean;
}

/** Delivers one HTTP request to the node's `webhook()` as n8n's webhook server would. */
export async function runWebhook(
	nodeType: INodeType,
	options: WebhookRunOptions,
): Promise<{
	webhookResponse: IWebhookResponseData;
	response: RecordedResponse;
	answer: (statusCode: number) => void;
}> {
	// n8n loads the static data from its database for each request and saves it only when it
	// answers without error (a 500 saves nothing): the request works on a copy
	const stored = options.staticData ?? {};
	const working = JSON.parse(JSON.stringify(stored)) as IDataObject;
	const save = () => {
		for (const key of Object.keys(stored)) delete stored[key];
		Object.assign(stored, JSON.parse(JSON.stringify(working)));
	};
	const { workflow, node } = buildWorkflow(nodeType, { ...options, staticData: working });
	const headers = Object.fromEntries(
		Object.entries(options.headers).map(([k, v]) => [k.toLowerCase(), v]),
	);
	let body: unknown = {};
	if ((headers['content-type'] ?? '').includes('json')) {
		try {
			body = JSON.parse(options.rawBody.toString('utf8'));
		} catch {
			// n8n's body parser would have rejected it before the node; the node sees the raw bytes.
			body = {};
		}
	}
	const request = {
		method: 'POST',
		headers,
		body,
		rawBody: options.rawBody,
		query: {},
		params: {},
		get: (name: string) => headers[name.toLowerCase()],
		header: (name: string) => headers[name.toLowerCase()],
	};
	const response = createRecordingResponse();
	const additionalData = buildAdditionalData(options, {
		httpRequest: request,
		httpResponse: response.object,
	} as unknown as Partial<IWorkflowExecuteAdditionalData>);
	const webhookData = buildWebhookData(
		workflow,
		node,
		additionalData,
		nodeType.description.webhooks?.[0],
		'POST',
	);
	const context = new WebhookContext(
		workflow,
		node,
		additionalData,
		options.mode ?? 'trigger',
		webhookData,
		[],
		null,
	);
	if (!nodeType.webhook) throw new Error(`${nodeType.description.name} has no webhook()`);
	const webhookResponse = await nodeType.webhook.call(context);
	const answer = (statusCode: number) => {
		if (response.recorded.ended) return;
		if (statusCode < 300) save();
		response.object
			.status(statusCode)
			.json(
				statusCode < 300
					? (webhookResponse.webhookResponse ?? {})
					: { message: 'There was a problem executing the workflow' },
			);
	};
	if (webhookResponse.noWebhookResponse === true) save();
	else {
		const n8nAnswer = webhookResponse.workflowData ? (options.n8nAnswer ?? 'created') : 'created';
		if (n8nAnswer !== 'later') answer(n8nAnswer === 'created' ? 200 : 500);
	}
	return { webhookResponse, response: response.recorded, answer };
}

function createRecordingResponse() {
	const recorded: RecordedResponse = { statusCode: 200, headers: {}, body: '', ended: false };
	const finished: Array<() => void> = [];
	const finish = () => {
		recorded.ended = true;
		for (const listener of finished.splice(0)) listener();
	};
	const object = {
		/** as an http.ServerResponse: 'finish' once the answer is sent */
		once(event: string, listener: () => void) {
			if (event === 'finish') finished.push(listener);
			return object;
		},
		get statusCode() {
			return recorded.statusCode;
		},
		set statusCode(code: number) {
			recorded.statusCode = code;
		},
		get writableEnded() {
			return recorded.ended;
		},
		status(code: number) {
			recorded.statusCode = code;
			return object;
		},
		setHeader(name: string, value: string) {
			recorded.headers[name.toLowerCase()] = String(value);
			return object;
		},
		header(name: string, value: string) {
			return object.setHeader(name, value);
		},
		set(name: string, value: string) {
			return object.setHeader(name, value);
		},
		writeHead(code: number, headers?: Record<string, string>) {
			recorded.statusCode = code;
			for (const [k, v] of Object.entries(headers ?? {})) object.setHeader(k, v);
			return object;
		},
		send(body?: unknown) {
			if (body !== undefined)
				recorded.body += typeof body === 'string' ? body : JSON.stringify(body);
			finish();
			return object;
		},
		json(body: unknown) {
			object.setHeader('content-type', 'application/json');
			return object.send(JSON.stringify(body));
		},
		write(chunk: unknown) {
			recorded.body += String(chunk);
			return true;
		},
		end(chunk?: unknown) {
			if (chunk !== undefined) recorded.body += String(chunk);
			finish();
			return object;
		},
	};
	return { object, recorded };
}

export interface PollRunOptions extends RunContextOptions {
	mode?: 'trigger' | 'manual';
	activation?: WorkflowActivateMode;
}

/** Calls the node's `poll()` as n8n's poll scheduler (or a manual run) would. */
export async function runPoll(
	nodeType: INodeType,
	options: PollRunOptions,
): Promise<{ items: INodeExecutionData[][] | null; staticData: IDataObject }> {
	const { workflow, node } = buildWorkflow(nodeType, options);
	const additionalData = buildAdditionalData(options);
	const context = new PollContext(
		workflow,
		node,
		additionalData,
		options.mode ?? 'trigger',
		options.activation ?? 'activate',
	);
	if (!nodeType.poll) throw new Error(`${nodeType.description.name} has no poll()`);
	const items = await nodeType.poll.call(context);
	return { items, staticData: workflow.staticData as IDataObject };
}

/** Calls a `methods.loadOptions` or `methods.listSearch` function as the editor does. */
export async function runLoadOptions<T = unknown>(
	nodeType: INodeType,
	method: string,
	options: RunContextOptions & { filter?: string; paginationToken?: string },
): Promise<T> {
	const { workflow, node } = buildWorkflow(nodeType, options);
	const additionalData = buildAdditionalData(options, {
		currentNodeParameters: node.parameters,
	} as Partial<IWorkflowExecuteAdditionalData>);
	const context = new LoadOptionsContext(workflow, node, additionalData, '');
	const loadOptions = nodeType.methods?.loadOptions?.[method];
	if (loadOptions) return (await loadOptions.call(context)) as T;
	const listSearch = nodeType.methods?.listSearch?.[method];
	if (listSearch)
		return (await listSearch.call(context, options.filter, options.paginationToken)) as T;
	throw new Error(
		`${nodeType.description.name} has no load-options or list-search method ${method}`,
	);
}
