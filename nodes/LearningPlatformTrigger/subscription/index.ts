// The subscription room's face: the trigger's v2 webhook subscription at the platform, registered
// on activation, moved, retired after deactivation, and probed through n8n's own webhook URL.
export { registerSubscription, releaseSubscription, subscriptionInPlace } from './lifecycle';
export { probeWebhook, webhookLive } from './probe';
export { retireAllNow } from './retirement';
export { readStoredSubscription, type StoredSubscription } from './stored';
