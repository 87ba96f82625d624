// The transport's public face for the nodes: requests, lists, and the wording of failures.
// What lives where: request.ts (the request loop), paging.ts (lists), wording.ts (every error
// message), settings.ts (connection per run), rateLimiter.ts, retryPolicy.ts, tokenExchange.ts,
// refusal.ts (credential rotation), secrets.ts (scrubbing). Design notes: docs/design.md.
export { clock, type Clock } from './clock';
export { apiKeyExpired, type ApiRoot } from './config';
export type { LearningPlatformContext } from './context';
export { testLearningPlatformCredential } from './credentialTest';
export { listAll, listPage, readList, LIST_PAGE_SIZE, type ListPage } from './paging';
export { resetRateLimiter } from './rateLimiter';
export {
	apiRequest,
	isFailedStatus,
	statusOf,
	type ApiRequestOptions,
	type FullResponse,
} from './request';
export { exchangeRefreshToken, resetTokenExchangeState } from './tokenExchange';
export { USER_AGENT, withUserAgent } from './userAgent';
export * as words from './wording';
export { apiFailure, operationFailure, rejectionOf, type Rejection } from './wording';
