import type { IExecuteFunctions, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { executeNode } from './n8n';

class EchoNode implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Echo',
		name: 'echo',
		group: ['transform'],
		version: 1,
		description: '',
		defaults: { name: 'Echo' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'URL', name: 'url', type: 'string', default: '' },
			{ displayName: 'Fail', name: 'fail', type: 'boolean', default: false },
		],
	};
	async execute(this: IExecuteFunctions) {
		const items = this.getInputData();
		const out = [];
		for (let i = 0; i < items.length; i++) {
			if (this.getNodeParameter('fail', i))
				throw new NodeOperationError(this.getNode(), 'boom', { itemIndex: i });
			const body = await this.helpers.httpRequest({
				url: this.getNodeParameter('url', i) as string,
				json: true,
			});
			out.push({ json: { ...body, i }, pairedItem: { item: i } });
		}
		return [out];
	}
}

test('the harness runs a node through WorkflowExecute with real HTTP', async () => {
	const server = createServer((_req, res) => {
		res.setHeader('content-type', 'application/json');
		res.end('{"ok":true}');
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
	const ok = await executeNode({
		nodeType: new EchoNode(),
		parameters: { url },
		items: [{ json: {} }, { json: {} }],
	});
	expect(ok.error).toBeUndefined();
	expect(ok.output[0].map((i) => i.json)).toEqual([
		{ ok: true, i: 0 },
		{ ok: true, i: 1 },
	]);
	const failed = await executeNode({ nodeType: new EchoNode(), parameters: { url, fail: true } });
	expect(failed.error?.message).toBe('boom');
	server.closeAllConnections();
	server.close();
});
