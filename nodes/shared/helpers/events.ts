import type { INodePropertyOptions } from 'n8n-workflow';

/**
 * Webhook event names exactly as the API writes them on the wire (single backslashes;
 * in TypeScript source each one is escaped). Shared by the action node (webhook create /
 * update / sendSample) and the webhook trigger.
 */

export interface EventDefinition {
	/** the name on the wire, e.g. `Events\Courses\Completion_created` */
	name: string;
	/** a human-readable label for option lists */
	displayName: string;
	category: EventCategory;
	isWildcard: boolean;
}

export type EventCategory = 'Notifications' | 'Users' | 'Courses' | 'Quiz' | 'All';

/** Every event of the spec, by category, in the order the spec lists them. */
const EVENTS_BY_CATEGORY: Record<Exclude<EventCategory, 'All'>, string[]> = {
	Notifications: [
		'Duedate',
		'Refresher',
		'Attendance',
		'Session_changed',
		'Session_cancelled',
		'Expressed_interest',
		'Enrolment',
		'Account_Merge',
		'Session_reminder',
		'Session_registration',
		'Session_withdrawn',
		'Session_deny',
		'Instructor_assignment',
		'Instructor_unassignment',
	],
	Users: ['Created', 'Updated', 'Deleted', 'Tenancy_added', 'Tenancy_removed'],
	Courses: [
		'Completion_created',
		'Completion_updated',
		'Completion_deleted',
		'Completion_archived',
	],
	Quiz: ['Attempt_completed'],
};

const CATEGORY_LABELS: Record<Exclude<EventCategory, 'All'>, string> = {
	Notifications: 'Notification',
	Users: 'User',
	Courses: 'Course',
	Quiz: 'Quiz',
};

export const EVENT_PREFIX = 'Events\\';
export const ALL_EVENTS_WILDCARD = '*';

/** `Duedate` -> `Due Date`, `Session_changed` -> `Session Changed`, `Account_Merge` -> `Account Merge` */
function humanise(eventSuffix: string): string {
	const special: Record<string, string> = { Duedate: 'Due Date' };
	if (special[eventSuffix]) return special[eventSuffix];
	return eventSuffix
		.split('_')
		.map((word) => word.charAt(0).toUpperCase() + word.slice(1))
		.join(' ');
}

function categoryWildcard(category: Exclude<EventCategory, 'All'>): string {
	return `${EVENT_PREFIX}${category}\\*`;
}

/** The five wildcards, broadest first: `*` then one per category. */
export const WILDCARD_EVENTS: EventDefinition[] = [
	{ name: ALL_EVENTS_WILDCARD, displayName: 'All Events (*)', category: 'All', isWildcard: true },
	...(Object.keys(EVENTS_BY_CATEGORY) as Array<Exclude<EventCategory, 'All'>>).map((category) => ({
		name: categoryWildcard(category),
		displayName: `All ${CATEGORY_LABELS[category]} Events (${category}\\*)`,
		category,
		isWildcard: true,
	})),
];

/** The concrete (non-wildcard) events of the spec. */
export const CONCRETE_EVENTS: EventDefinition[] = (
	Object.entries(EVENTS_BY_CATEGORY) as Array<[Exclude<EventCategory, 'All'>, string[]]>
).flatMap(([category, suffixes]) =>
	suffixes.map((suffix) => ({
		name: `${EVENT_PREFIX}${category}\\${suffix}`,
		displayName: `${CATEGORY_LABELS[category]}: ${humanise(suffix)}`,
		category,
		isWildcard: false,
	})),
);

/** Wildcards first, then the concrete events. */
export const ALL_EVENTS: EventDefinition[] = [...WILDCARD_EVENTS, ...CONCRETE_EVENTS];

const KNOWN_EVENTS = new Map(ALL_EVENTS.map((event) => [event.name, event]));

export function isWildcardEvent(name: string): boolean {
	return name === ALL_EVENTS_WILDCARD || name.endsWith('\\*');
}

/**
 * Describes any event name, also one the API lists that this package does not know yet
 * (the server's list is the source of truth; the static list is a fallback).
 */
export function describeEvent(name: string): EventDefinition {
	const known = KNOWN_EVENTS.get(name);
	if (known) return known;
	const parts = name.split('\\');
	const category = (parts[1] ?? 'All') as EventCategory;
	const suffix = parts[parts.length - 1] ?? name;
	if (isWildcardEvent(name)) {
		return {
			name,
			displayName: `All ${parts[1] ?? ''} Events (${name})`,
			category,
			isWildcard: true,
		};
	}
	return {
		name,
		displayName: parts.length >= 3 ? `${parts[1]}: ${humanise(suffix)}` : name,
		category,
		isWildcard: false,
	};
}

/**
 * Option-list entries for event names, wildcards first (broadest first), then the concrete
 * events in the order given. Duplicates are dropped.
 */
export function toEventOptions(names: string[]): INodePropertyOptions[] {
	const unique = [...new Set(names.filter((name) => typeof name === 'string' && name !== ''))];
	const wildcards = unique.filter(isWildcardEvent).sort((a, b) => {
		// `*` first, then the category wildcards in the spec's order
		const rank = (name: string) => {
			const index = WILDCARD_EVENTS.findIndex((event) => event.name === name);
			return index === -1 ? WILDCARD_EVENTS.length : index;
		};
		return rank(a) - rank(b);
	});
	const concrete = unique.filter((name) => !isWildcardEvent(name));
	return [...wildcards, ...concrete].map((name) => {
		const event = describeEvent(name);
		return { name: event.displayName, value: event.name, description: event.name };
	});
}

const FRIENDLY_CATEGORY: Record<string, string> = {
	Courses: 'Course',
	Users: 'User',
	Quiz: 'Quiz',
	Notifications: 'Notification',
};

/**
 * A sentence-case name for people: `Events\Courses\Completion_created` -> "Course completion
 * created", `Events\Notifications\Enrolment` -> "Enrolment notification", `Events\Users\*` ->
 * "Any user event", `*` -> "Any event". Unknown names fall back to their last part.
 */
export function friendlyEventName(name: string): string {
	if (name === ALL_EVENTS_WILDCARD) return 'Any event';
	const parts = name.split('\\');
	const category = parts[1] ?? '';
	const label = FRIENDLY_CATEGORY[category] ?? category;
	if (isWildcardEvent(name)) return `Any ${label.toLowerCase()} event`.replace(/\s+/g, ' ');
	if (parts.length < 3) return name;
	const what = humanise(parts[parts.length - 1]).toLowerCase();
	if (category === 'Notifications')
		return `${what.charAt(0).toUpperCase()}${what.slice(1)} notification`;
	return `${label} ${what}`;
}

/**
 * The trigger's Event list: every event of the spec with its friendly name, and an `action`
 * ("On course completion created") that n8n's node picker lists as one entry per event.
 */
export function triggerEventOptions(): INodePropertyOptions[] {
	return ALL_EVENTS.map((event) => ({
		name: event.displayName,
		value: event.name,
		action: `On ${friendlyEventName(event.name).charAt(0).toLowerCase()}${friendlyEventName(event.name).slice(1)}`,
		description: event.isWildcard
			? `Every event ${event.name === ALL_EVENTS_WILDCARD ? 'of the platform' : `of the ${event.category} category`} (${event.name})`
			: `${friendlyEventName(event.name)} (${event.name})`,
	}));
}

/**
 * An n8n expression for a node subtitle: the friendly name of the value of parameter `parameter`
 * (the raw name for one this package does not know).
 */
export function friendlyEventSubtitle(parameter: string): string {
	const names = Object.fromEntries(
		ALL_EVENTS.map((event) => [event.name, friendlyEventName(event.name)]),
	);
	return `={{ (${JSON.stringify(names)})[$parameter["${parameter}"]] || $parameter["${parameter}"] }}`;
}

/** The static option list (used when the API's event list cannot be loaded). */
export function staticEventOptions(): INodePropertyOptions[] {
	return toEventOptions(ALL_EVENTS.map((event) => event.name));
}

/**
 * Whether a delivery of `concrete` is covered by a subscription to `subscribed`.
 * `*` covers everything; `Events\Courses\*` covers every `Events\Courses\...` event;
 * anything else must match exactly. Case-sensitive, as the API's names are.
 */
export function eventMatches(subscribed: string, concrete: string): boolean {
	if (subscribed === ALL_EVENTS_WILDCARD) return true;
	if (subscribed.endsWith('\\*')) {
		const prefix = subscribed.slice(0, -1); // keep the trailing backslash
		return concrete.startsWith(prefix) && concrete.length > prefix.length;
	}
	return subscribed === concrete;
}
