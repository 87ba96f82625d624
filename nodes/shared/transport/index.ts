// The transport's public face: what the nodes and the credential import, nothing more. What lives
// where: request.ts (the request loop), paging.ts (lists), wording.ts (the messages of failed
// requests; messages of one node's own outcomes stand in that node's folder), settings.ts
// (connection per run), rateLimiter.ts, retryPolicy.ts, tokenExchange.ts, refusal.ts (credential
// rotation), secrets.ts (scrubbing), processState.ts (the core's four pieces of process-wide state
// and their resets, for tests only). Design notes: docs/design.md.
export { clock, type Clock } from './clock';
export { apiKeyExpired } from './config';
export type { LearningPlatformContext } from './context';
export { testLearningPlatformCredential } from './credentialTest';
export { followPages, listAll, listPage, readList, LIST_PAGE_SIZE, type ListPage } from './paging';
export type { KeyUse } from './rateLimiter';
export { apiRequest, statusOf } from './request';
export { keyUseOf } from './settings';
export { exchangeRefreshToken } from './tokenExchange';
export { withUserAgent } from './userAgent';
export {
	apiFailure,
	failedStatusMessage,
	operationFailure,
	rejectionOf,
	type FailureNotice,
	type RejectionReading,
} from './wording';
