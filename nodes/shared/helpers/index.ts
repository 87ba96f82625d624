// The core's helpers, used by more than one node: logic without UI. What lives where: dates.ts
// (the feed's timestamps), events.ts (webhook event names and pickers), feed.ts (the completions
// feed walker), masking.ts (subscription secrets), parameters.ts (parameter readers),
// simplify.ts (Simplify's field picking), subscriptionRules.ts (the platform's webhook
// subscription rules: the cap, https only, the 422s with their advice), triggerScope.ts (a trigger
// node of a workflow, as process memory keys it).
export * from './dates';
export * from './events';
export * from './feed';
export * from './masking';
export * from './parameters';
export * from './simplify';
export * from './subscriptionRules';
export * from './triggerScope';
