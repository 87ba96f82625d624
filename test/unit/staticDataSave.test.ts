/**
 * What a delivery that starts an execution writes into static data must still count as changed
 * when n8n saves. n8n 2.x builds a second `Workflow` over the same static data object before that
 * save (WorkflowRunner.establishContextForPersistence), as the real n8n-workflow's `Workflow` does
 * here; n8n's save (WorkflowStaticDataService.saveStaticData) writes only when
 * `workflow.staticData.__dataChanged` is true, and clears it.
 */
import type { IDataObject, INodeTypes } from 'n8n-workflow';
import { sleep, Workflow } from 'n8n-workflow';

import { keepChangedUntilAnswered } from '../../nodes/LearningPlatformTrigger/deliveries/staticDataSave';

const TRIGGER = { name: 'Completion' };

const noNodeTypes = {
	getByName: () => undefined,
	getByNameAndVersion: () => undefined,
	getKnownTypes: () => ({}),
} as unknown as INodeTypes;

/** As n8n builds a workflow from what it loaded: `stored` is the object both builds share. */
function workflowOver(stored: IDataObject): Workflow {
	return new Workflow({
		id: 'w1',
		nodes: [],
		connections: {},
		active: true,
		nodeTypes: noNodeTypes,
		staticData: stored,
	});
}

/** The part of n8n's HTTP response the helper reads: ended once n8n has answered. */
function unansweredResponse() {
	return { writableEnded: false, statusCode: 200 };
}

/** A delivery's webhook(): loaded static data, the ledger written into the node's part. */
function deliveryWrites() {
	const stored: IDataObject = { 'node:Completion': { secretSeed: 'seed', subscriptionId: 1 } };
	const workflow = workflowOver(stored);
	const nodeData = workflow.getStaticData('node', TRIGGER as never);
	nodeData.startedDeliveries = 'the ledger with this delivery';
	return { stored, workflow, nodeData };
}

describe('static data written by a delivery that starts an execution', () => {
	test("n8n 2.x's second Workflow over the same object marks the write unchanged (why the helper exists)", async () => {
		const { stored, workflow } = deliveryWrites();
		expect(workflow.staticData.__dataChanged).toBe(true);

		workflowOver(stored);
		await sleep(5);
		expect(workflow.staticData.__dataChanged).toBe(false);
	});

	test('is marked changed again after that reset, until n8n has answered', async () => {
		const { stored, workflow, nodeData } = deliveryWrites();
		const response = unansweredResponse();
		keepChangedUntilAnswered(nodeData, response);

		// n8n resets in the same turn as webhook() returns, before its first wait for I/O
		workflowOver(stored);
		expect(workflow.staticData.__dataChanged).toBe(false);
		await sleep(5);
		expect(workflow.staticData.__dataChanged).toBe(true);
		// what n8n's save would store: the write, the rest untouched
		expect(JSON.parse(JSON.stringify(workflow.staticData))).toEqual({
			'node:Completion': {
				secretSeed: 'seed',
				subscriptionId: 1,
				startedDeliveries: 'the ledger with this delivery',
			},
		});

		// n8n saved (clearing the mark) and answered: nothing marks the data any more
		workflow.staticData.__dataChanged = false;
		response.writableEnded = true;
		await sleep(5);
		expect(workflow.staticData.__dataChanged).toBe(false);
	});

	test('one timer serves several deliveries; each stops with its own answer', async () => {
		const first = deliveryWrites();
		const second = deliveryWrites();
		const firstResponse = unansweredResponse();
		const secondResponse = unansweredResponse();
		keepChangedUntilAnswered(first.nodeData, firstResponse);
		keepChangedUntilAnswered(second.nodeData, secondResponse);
		workflowOver(first.stored);
		workflowOver(second.stored);

		firstResponse.writableEnded = true;
		await sleep(5);
		first.workflow.staticData.__dataChanged = false;
		await sleep(5);
		expect(first.workflow.staticData.__dataChanged).toBe(false);
		expect(second.workflow.staticData.__dataChanged).toBe(true);
		secondResponse.writableEnded = true;
	});
});
