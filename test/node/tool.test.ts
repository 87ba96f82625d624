/**
 * The node as an AI agent's or MCP client's tool. n8n builds the tool copy (`learningPlatformTool`)
 * from the node's description as `convertNodeToAiTool` does; its description, `$fromAI` schema and
 * runs go through n8n-workflow's and n8n-core's own code, against the sandbox.
 */
import type { INode, INodeType, INodeTypeDescription, IDataObject } from 'n8n-workflow';
import { NodeHelpers, deepCopy } from 'n8n-workflow';
// n8n-core's own tool builder: what the MCP Server Trigger hands its clients
import { createNodeAsTool } from 'n8n-core/dist/execution-engine/node-execution-context/utils/create-node-as-tool';

import { toolDescription as feedToolDescription } from '../../nodes/LearningPlatform/actions/completion/getMany.operation';
import { resources } from '../../nodes/LearningPlatform/actions/router';
import { LearningPlatform } from '../../nodes/LearningPlatform/LearningPlatform.node';
import { executeNode, PACKAGE_NAME } from '../support/n8n';
import { json, setUpNodeTests, type NodeTestContext } from './setup';

/** The tool copy n8n registers for a node with `usableAsTool` (n8n/dist/tool-generation/ai-tools.js). */
function toolCopy(): INodeType {
	const node = new LearningPlatform();
	const description = deepCopy(node.description) as INodeTypeDescription;
	description.name += 'Tool';
	description.displayName += ' Tool';
	description.inputs = [];
	description.outputs = ['ai_tool'];
	delete description.usableAsTool;
	return Object.assign(Object.create(Object.getPrototypeOf(node) as object) as INodeType, node, {
		description,
	});
}

const tool = toolCopy();

function workflowNode(parameters: IDataObject, name = 'Learning Platform tool'): INode {
	const node: INode = {
		id: 'tool-node',
		name,
		type: `${PACKAGE_NAME}.${tool.description.name}`,
		typeVersion: 1,
		position: [0, 0],
		parameters: parameters as INode['parameters'],
	};
	// n8n fills in the defaults of the visible parameters when it loads a workflow
	node.parameters = NodeHelpers.getNodeParameters(
		tool.description.properties,
		node.parameters,
		true,
		false,
		node,
		tool.description,
	)!;
	return node;
}

let t: NodeTestContext;
beforeAll(async () => {
	t = await setUpNodeTests('tool');
});
afterAll(async () => await t.close());

describe('what the model reads about each operation', () => {
	const operations = Object.entries(resources).flatMap(([resource, table]) =>
		Object.entries(table).map(([operation, module]) => ({ resource, operation, module })),
	);

	test.each(operations)(
		'$resource → $operation: its own tool description, not "<action> in Learning Platform"',
		({ resource, operation, module }) => {
			const node = workflowNode({ resource, operation });
			const text = NodeHelpers.getToolDescriptionForNode(node, tool);
			expect(text).toBe(module.toolDescription);
			expect(text.length).toBeGreaterThan(module.option.action.length + 20);
		},
	);

	test('the regular node shows no tool description; the tool copy lets the author edit it', () => {
		const regular = new LearningPlatform().description.properties;
		const visible = NodeHelpers.getNodeParameters(
			regular,
			{ resource: 'bookmark', operation: 'create' },
			true,
			false,
			{ typeVersion: 1 } as INode,
			new LearningPlatform().description,
		)!;
		expect(visible.toolDescription).toBeUndefined();
		const edited = workflowNode({
			resource: 'bookmark',
			operation: 'create',
			toolDescription: 'Bookmarks the onboarding course for a new hire.',
		});
		expect(NodeHelpers.getToolDescriptionForNode(edited, tool)).toBe(
			'Bookmarks the onboarding course for a new hire.',
		);
	});
});

describe('a tool call', () => {
	const bookmarkTool = () =>
		workflowNode(
			{
				resource: 'bookmark',
				operation: 'create',
				username: "={{ $fromAI('username', 'Login name of the learner, e.g. learner023') }}",
				contentId: "={{ $fromAI('contentId', 'Numeric ID of the course', 'number') }}",
				contentType: 'course',
			},
			'Bookmark a course',
		);

	/** n8n-core's tool: the schema from `$fromAI`, each call running the node once on its arguments. */
	const asTool = (node: INode) =>
		createNodeAsTool({
			node,
			nodeType: tool,
			handleToolInvocation: async (args: IDataObject) => {
				const result = await executeNode({
					nodeType: tool,
					parameters: node.parameters as IDataObject,
					items: [{ json: args }],
					credentials: t.credentials,
				});
				if (result.error) throw result.error;
				return JSON.stringify(json(result));
			},
		});

	test('the arguments the model fills come from $fromAI, with their descriptions and types', () => {
		const { response: built } = asTool(bookmarkTool());
		expect(built.name).toBe('Bookmark_a_course');
		expect(built.description).toMatch(/^Bookmarks one piece of content for one learner/);
		const shape = (built.schema as unknown as { shape: Record<string, { description?: string }> })
			.shape;
		expect(Object.keys(shape).sort()).toEqual(['contentId', 'username']);
		expect(shape.username.description).toBe('Login name of the learner, e.g. learner023');
	});

	test('a call bookmarks the course at the platform; a wrong learner comes back as a readable error', async () => {
		const demo = await t.sandbox.control.demo();
		const learner = demo.users.find((u) => !u.deleted && !u.suspended)!;
		const course = demo.content.find((c) => c.contenttype === 'Course' && !c.deleted)!;
		const { response: built } = asTool(bookmarkTool());

		const answer = await built.invoke({ username: learner.username, contentId: course.id });
		expect(JSON.parse(String(answer))).toEqual([
			expect.objectContaining({
				bookmarkable_id: course.id,
				username: learner.username,
				contentType: 'course',
			}),
		]);

		const failed = await built
			.invoke({ username: 'nobody-by-this-name', contentId: course.id })
			.then(
				(value) => ({ value }),
				(error: Error) => ({ error: error.message }),
			);
		expect(failed).toEqual({
			error: expect.stringMatching(/No learner "nobody-by-this-name" or no course with ID \d+/),
		});
	});

	test('the completions tool as added: an empty schema, and words that ask the model for nothing it cannot set', async () => {
		// the tool copy's defaults bind nothing with $fromAI: n8n gives the model no inputs at all
		const { response: plain } = asTool(
			workflowNode({ resource: 'completion', operation: 'getMany' }),
		);
		expect(Object.keys((plain.schema as unknown as { shape: object }).shape)).toEqual([]);
		expect(plain.description).toBe(feedToolDescription);
		expect(plain.description).toContain(
			"give only the inputs this tool's schema lists, and call it without arguments when it lists none",
		);
		expect(plain.description).not.toMatch(
			/Narrow it with|Updated Since|Content ID or Content Type/,
		);

		// what the model gets back from a call without arguments: the first Limit records, and a
		// note that says what to do with the inputs it has (or has not)
		const items = JSON.parse(String(await plain.invoke({}))) as IDataObject[];
		expect(items).toHaveLength(51);
		expect(items[50].note).toBe(
			'Showing the first 50 records; more exist. If this tool takes inputs (a course, a content type, a start time), narrow the read with them; otherwise tell the user that more records exist than were shown.',
		);

		// the demo's binding: the course becomes the one input, with the author's words
		const { response: byCourse } = asTool(
			workflowNode({
				resource: 'completion',
				operation: 'getMany',
				filters: {
					contentId: "={{ $fromAI('contentId', 'Numeric ID of the course, e.g. 101', 'number') }}",
				},
			}),
		);
		const shape = (
			byCourse.schema as unknown as { shape: Record<string, { description?: string }> }
		).shape;
		expect(Object.keys(shape)).toEqual(['contentId']);
		expect(shape.contentId.description).toBe('Numeric ID of the course, e.g. 101');
	});

	test('a 422 reaches the model with one full stop between sentences ("NodeOperationError:" is n8n\'s wrapper)', async () => {
		const demo = await t.sandbox.control.demo();
		const learner = demo.users.find((u) => !u.deleted && !u.suspended)!;
		const node = workflowNode(
			{
				resource: 'bookmark',
				operation: 'create',
				username: "={{ $fromAI('username', 'Login name of the learner, e.g. learner023') }}",
				contentId: "={{ $fromAI('contentId', 'Numeric ID of the course', 'number') }}",
				contentType: 'podcast',
			},
			'Bookmark a podcast',
		);
		const thrown = await asTool(node)
			.response.invoke({ username: learner.username, contentId: 101 })
			.then(
				() => undefined,
				(error: Error) => error,
			);
		expect(thrown).toBeDefined();
		// n8n-core's tool runner (makeHandleToolInvocation) wraps a node's error in a
		// NodeOperationError and appends "\n\nDetails: <description>"; the MCP Server Trigger sends
		// `${error.name}: ${error.message}`: the "NodeOperationError:" in front is n8n's, the rest ours
		const { message, description } = thrown as Error & { description?: string };
		const text = `NodeOperationError: ${message}\n\nDetails: ${description}`;
		expect(text).toBe(
			'NodeOperationError: The learning platform could not process the request (422): The selected contentType is invalid. Allowed values: course, live learning, video, resource.\n\nDetails: contentType: The selected contentType is invalid. Allowed values: course, live learning, video, resource. The server rejected the values sent: change them accordingly and run the node again.',
		);
		expect(text).not.toMatch(/\.\s*\./);
	});
});

describe('what comes back into the model context is bounded', () => {
	const contentReport = { resource: 'report', operation: 'getContent', filters: {}, options: {} };

	test('a report hands the model at most Limit records and says how many more there were', async () => {
		const everything = json(await t.run(contentReport));
		expect(everything.length).toBeGreaterThan(10);

		const result = await executeNode({
			nodeType: tool,
			parameters: { ...contentReport, limit: 10 },
			credentials: t.credentials,
		});
		expect(result.error).toBeUndefined();
		const items = json(result);
		expect(items).toHaveLength(11);
		expect(items.slice(0, 10)).toEqual(everything.slice(0, 10));
		expect(items[10]).toEqual({
			note: `Showing 10 of ${everything.length} records. Ask for a narrower report (one learner with User ID, or one course with Content ID).`,
		});
	});

	test('an empty report is said to be empty (n8n would hand the model an empty text)', async () => {
		const demo = await t.sandbox.control.demo();
		const suspended = demo.users.find((u) => u.suspended && !u.deleted)!;
		const parameters = {
			resource: 'report',
			operation: 'getActivityCompletions',
			userId: String(suspended.id),
		};
		expect(json(await t.run(parameters))).toEqual([]);
		const result = await executeNode({ nodeType: tool, parameters, credentials: t.credentials });
		expect(json(result)).toEqual([
			{ note: expect.stringMatching(/^No records matched\. Suspended learners are left out/) },
		]);
	});

	test('a feed read stops at its Limit and says that more exist', async () => {
		const result = await executeNode({
			nodeType: tool,
			parameters: { resource: 'completion', operation: 'getMany', limit: 5 },
			credentials: t.credentials,
		});
		const items = json(result);
		expect(items).toHaveLength(6);
		expect(items[5].note).toMatch(/^Showing the first 5 records; more exist\./);
		for (const record of items.slice(0, 5)) expect(record.completionid).toEqual(expect.any(Number));
	});
});
