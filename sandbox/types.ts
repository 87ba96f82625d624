/** Domain types of the simulated tenancy (internal representation; wire shapes are built per area). */

export type ContentType = 'Course' | 'Live Learning' | 'Video' | 'Resource';
export const CONTENT_TYPES: readonly ContentType[] = [
	'Course',
	'Live Learning',
	'Video',
	'Resource',
];

export type CompletionStatus =
	| 'Completed'
	| 'In Progress'
	| 'Enrolled'
	| 'Archived'
	| 'Viewed'
	| 'Did Not Complete';
export const COMPLETION_STATUSES: readonly CompletionStatus[] = [
	'Completed',
	'In Progress',
	'Enrolled',
	'Archived',
	'Viewed',
	'Did Not Complete',
];

/** A learner of the tenancy (not to be confused with the integration's API user). */
export interface Learner {
	id: number;
	username: string;
	email: string;
	firstname: string;
	lastname: string;
	suspended: boolean;
	deleted: boolean;
	/** custom user fields, name -> value (`userdata`) */
	customfields: Record<string, string>;
}

export interface Session {
	id: number;
	name: string;
	sessiontype: 'Face to Face' | 'Virtual';
	start: number;
	end: number;
	customfields: Record<string, string>;
}

export interface Content {
	id: number;
	centralId: number;
	fullname: string;
	contenttype: ContentType;
	description: string;
	summary: string;
	status: string;
	cost: number;
	duration: number | null;
	programs: { id: number; fullname: string }[];
	category: string | null;
	tags: string[];
	/** every content custom field of the tenancy, `data` '' when unset */
	customfields: { name: string; data: string }[];
	timecreated: number;
	timemodified: number;
	activities: { id: number; name: string }[];
	sessions: Session[];
	/** days a certificate stays valid (sets `expiry`), null = never expires */
	certificateValidityDays: number | null;
	deleted: boolean;
}

export interface Attendance {
	userid: number;
	contentid: number;
	sessionid: number;
	attendancestatus: 'Attended' | 'Did Not Attend';
	note: string | null;
}

/** One version of a completion record. Times are ms (UTC) or null when empty. */
export interface CompletionData {
	completionid: number;
	userid: number;
	contentid: number;
	certificateid: string;
	comment: string | null;
	/** whole seconds */
	lastupdated: number;
	timeenrolled: number | null;
	timestarted: number | null;
	timecompleted: number | null;
	expiry: number | null;
	completionstatus: CompletionStatus;
}

export interface ApiUser {
	username: string;
	refreshToken: string;
	apiKey: string;
	apiKeyExpiresAt: number;
	exchanges: number;
	failedExchanges: number;
	createdAt: number;
}

export interface Subscription {
	id: number;
	/** the API user owning it (see README: "per API key" = per integration credential) */
	owner: string;
	event: string;
	url: string;
	content_type_header: string;
	is_enabled: boolean;
	auth_type: string | null;
	signing_key: string | null;
	auth_token: string | null;
	created_at: number;
	updated_at: number;
	deleted_at: number | null;
}

export interface DeliveryLog {
	id: number;
	subscriptionId: number;
	event_type: string;
	delivery_id: string;
	success: boolean;
	tries: number;
	status_code: number | null;
	response: string;
	response_time_ms: number | null;
	redispatched: boolean;
	created_at: number;
	updated_at: number;
	/** internal: the payload to re-send on redispatch (never exposed in log entries) */
	payload: unknown;
	/** internal: the completion record the payload was built from (the "payload model") */
	completionId: number | null;
	/**
	 * internal: the delivery this entry belongs to (the id of its first entry): with one entry per
	 * attempt, every attempt and every redispatch of one event occurrence shares it
	 */
	ref: number;
}

export interface DeliveryAttempt {
	id: number;
	subscription_id: number | null;
	log_id: number | null;
	/** the log entry of the delivery's first attempt: the attempts of one delivery and its redispatches share it, whichever `deliveryLog` */
	delivery_ref: number | null;
	username: string | null;
	url: string;
	event: string;
	delivery_id: string;
	body: string;
	headers: Record<string, string>;
	attempt: number;
	status_code: number | null;
	error: string | null;
	response: string | null;
	response_time_ms: number | null;
	/** when the attempt was recorded (its answer, error or time-out), whole seconds */
	at: string;
	/** when the attempt was sent, ISO 8601 with milliseconds (sandbox clock) */
	sent_at: string;
}

export interface Bookmark {
	id: number;
	userid: number;
	bookmarkable_type: string;
	bookmarkable_id: number;
	central_content_id: number;
	created_at: number;
	updated_at: number;
}

export type ReportKind = 'activitycompletions' | 'attendance' | 'content';
export interface ReportRequest {
	id: number;
	owner: string;
	kind: ReportKind;
	params: Record<string, string>;
	submittedAt: number;
	polls: number;
	errors: Record<string, unknown> | null;
	/** computed once when the request first turns Complete */
	data?: unknown[];
}

export interface RequestLogEntry {
	at: string;
	method: string;
	path: string;
	query: Record<string, string>;
	user_agent: string | null;
	authorization_kind: 'refresh' | 'api_key' | 'none' | 'invalid';
	username: string | null;
	status: number | null;
}
