// What the e2e files that follow single course completions through one trigger workflow share:
// the workflow (the trigger on Completion_created, then a No Operation), completions made on the
// platform one (learner, course) pair at a time, and the completion each stored execution ran
// with, judged by what n8n stored.
import {
	nodeOutput,
	type N8nClient,
	type SandboxSubscription,
	type Stack,
	type WorkflowJson,
} from '../../scripts/n8n';
import { waitFor } from '../sandbox/helpers';
import { demoData, linearWorkflow, sleep, TYPES } from './helpers';

const TRIGGER_NODE = 'Completion created';

/** A workflow of the trigger on Completion_created and a No Operation after it. */
export function completionWorkflow(
	id: string,
	name: string,
	credentialId: string,
	webhookId: string,
): WorkflowJson {
	return linearWorkflow(id, name, [
		{
			name: TRIGGER_NODE,
			type: TYPES.trigger,
			credentialId,
			webhookId,
			parameters: { event: 'Events\\Courses\\Completion_created' },
		},
		{ name: 'Done', type: 'n8n-nodes-base.noOp' },
	]);
}

/** Completions made for one workflow of `stack`, and what its executions ran. */
export class CompletionRuns {
	/** Completion ids made so far, in order. */
	readonly made: number[] = [];
	private pairs: Array<{ userId: number; contentId: number }> = [];

	private constructor(
		private readonly stack: Stack,
		private readonly workflowId: string,
	) {}

	/** Every (active learner, course) pair of the sandbox's demo data is there to complete. */
	static async of(stack: Stack, workflowId: string): Promise<CompletionRuns> {
		const runs = new CompletionRuns(stack, workflowId);
		const demo = await demoData(stack);
		runs.pairs = demo.content
			.filter((c) => c.contenttype === 'Course' && !c.deleted)
			.flatMap((c) => demo.activeLearners.map((l) => ({ userId: l.id, contentId: c.id })));
		return runs;
	}

	private get control() {
		return this.stack.sandbox!.control;
	}

	/** The API user's subscriptions not deleted. */
	async live(username: string): Promise<SandboxSubscription[]> {
		return (await this.control.subscriptions(username)).filter((s) => !s.deleted_at);
	}

	/** A course completion on the platform (a pair of its own); its id. */
	async complete(): Promise<number> {
		const pair = this.pairs.shift();
		if (!pair) throw new Error('no (learner, course) pair left');
		const id = (await this.control.simulateCompletion(pair)).completion.completionid;
		this.made.push(id);
		return id;
	}

	/** The completion id each finished execution in `client`'s n8n ran with (or why it did not run). */
	async ran(client: N8nClient = this.stack.client): Promise<Array<number | string>> {
		const executions = await client.listExecutions({
			workflowId: this.workflowId,
			includeData: true,
		});
		return executions
			.filter((e) => e.stoppedAt)
			.map((e) =>
				e.status === 'success'
					? (nodeOutput(e, TRIGGER_NODE)[0].payload as { completion: { id: number } }).completion.id
					: `execution ${e.id}: ${e.status}`,
			);
	}

	/** The platform has no delivery attempt pending (a failed one has had its retries). */
	async platformIdle(): Promise<void> {
		await waitFor(
			async () => (await this.control.pendingDeliveries()).pending === 0,
			60_000,
			'no delivery pending at the platform',
			250,
		);
	}

	/** Every id in `ids` ran in `client`'s n8n, then (the platform idle, 5 s of quiet) each once. */
	async expectRanOnce(
		ids: number[],
		{ client = this.stack.client, timeoutMs = 120_000 } = {},
	): Promise<void> {
		await waitFor(
			async () => {
				const done = await this.ran(client);
				return ids.every((id) => done.includes(id));
			},
			timeoutMs,
			() => `completions ${ids.join(', ')} run`,
			1000,
		);
		await this.platformIdle();
		await sleep(5_000);
		const done = await this.ran(client);
		for (const id of ids)
			expect({ id, runs: done.filter((d) => d === id).length }).toEqual({ id, runs: 1 });
		expect(done.filter((d) => typeof d === 'string')).toEqual([]);
	}
}
