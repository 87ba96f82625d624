// The webhook trigger's parameters, as the editor shows them.
import type { INodeProperties } from 'n8n-workflow';

import { eventPicker } from '../shared/descriptions';

export const triggerProperties: INodeProperties[] = [
	// A fixed list (the spec's events), named "Event": n8n's node picker then lists one entry
	// per event ("On course completion created"), as for its own triggers.
	eventPicker({
		fixedList: {
			// n8n cannot show advice only when it applies (displayOptions compare parameters, and
			// nothing in a description can read the webhook URL), so the HTTPS rule is a quiet
			// hint, and activation refuses an http:// URL with an explanation before sending anything.
			hint: "The platform delivers only to https:// addresses: check that the Webhook URLs above start with https://. If not, set n8n's WEBHOOK_URL to its public https:// address, or use the Learning Platform Completion Trigger (polls, no public address needed).",
		},
		description:
			'The event to subscribe to. A wildcard (Any event, or Any ... event of one category) subscribes to every event it covers. An event not listed here can be given as an expression with its full name, e.g. Events\\Courses\\Completion_created.',
	}),
	{
		displayName: 'Pass On Event Names or IDs',
		name: 'passOnEvents',
		type: 'multiOptions',
		typeOptions: {
			loadOptionsMethod: 'getConcreteEvents',
		},
		displayOptions: {
			show: {
				event: [{ _cnd: { endsWith: '*' } }],
			},
		},
		default: [],
		description:
			'With a wildcard event: start the workflow only for these events; others are acknowledged and dropped. Empty passes on every event the wildcard covers. Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Ignore Repeated Deliveries',
				name: 'ignoreRepeatedDeliveries',
				type: 'boolean',
				default: true,
				description:
					'Whether to acknowledge a delivery of an event that already ran the workflow in the last 74 hours (a platform retry after a time-out, or a redispatch) without running it again, whichever n8n process receives it. Turn off to run the workflow for every delivery.',
			},
			{
				displayName: 'Keep Subscription While Inactive',
				name: 'keepSubscriptionWhileInactive',
				type: 'boolean',
				default: false,
				description:
					'Whether deactivating the workflow keeps its subscription at the platform, so the completions made while it is off are delivered (once each) when it is activated again. The subscription keeps counting towards the 100 the API key may have; delete it with the Learning Platform node (Webhook → Delete) if the workflow is deleted while inactive.',
			},
			{
				displayName: 'Recover Missed Deliveries',
				name: 'recoverMissedDeliveries',
				type: 'boolean',
				default: true,
				description:
					'Whether to have the platform send again the deliveries it could not make while n8n was down or unreachable (up to three days back, a weekend), so each still runs the workflow once. Checked on activation, on the first delivery after n8n starts, and every 15 minutes while active.',
			},
			{
				displayName: 'Reject Deliveries Older Than (Minutes)',
				name: 'maxDeliveryAgeMinutes',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 60,
				description:
					"Refuse a delivery sent longer ago than this, so a copy of a genuine delivery replayed later starts nothing, even after n8n restarts. The send time is the delivery's signed <code>now</code>. A platform retry of an older delivery is refused too: redispatch it from the platform's delivery log (a redispatch is sent with a new time). Leave room for a clock difference between the platform and n8n.",
			},
		],
	},
];
