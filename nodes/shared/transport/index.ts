// The transport's public face: requests, lists, the wording of failures, the clock, and the
// credential's exchange. What lives where: request.ts (the request loop), paging.ts (lists),
// wording.ts (the messages of failed requests; a few messages stand beside their only use, e.g.
// a cancelled request in request.ts and rateLimiter.ts), settings.ts (connection per run),
// rateLimiter.ts, retryPolicy.ts, tokenExchange.ts, refusal.ts (credential rotation), secrets.ts
// (scrubbing), processState.ts (all process-wide state). Design notes: docs/design.md.
export { clock, resetClock, type Clock } from './clock';
export { apiKeyExpired, type ApiRoot } from './config';
export type { LearningPlatformContext } from './context';
export { testLearningPlatformCredential } from './credentialTest';
export { listAll, listPage, readList, LIST_PAGE_SIZE, type ListPage } from './paging';
export { coreProcessState, resetCoreProcessState, type ProcessState } from './processState';
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
