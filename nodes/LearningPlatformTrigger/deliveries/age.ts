/**
 * Replay protection that survives restarts: the platform signs each delivery's body, and the
 * body carries `now` (Unix seconds, spec "Delivery rules" 7), so a copy replayed later cannot
 * change its send time. Refusing deliveries older than a limit needs no memory at all. The
 * delivery ledger's repeat check (./deliveryLedger.ts) covers the window inside that limit.
 */
export interface DeliveryAge {
	tooOld: boolean;
	/** ISO 8601 send time, when the delivery had one */
	sentAt?: string;
	/** why it was refused (shown to the platform in the response) */
	reason: string;
}

export function deliveryAge(now: unknown, maxAgeMinutes: number, atMs: number): DeliveryAge {
	const seconds =
		typeof now === 'number'
			? now
			: typeof now === 'string' && /^\d+$/.test(now.trim())
				? Number(now)
				: NaN;
	if (!Number.isFinite(seconds) || seconds <= 0) {
		return {
			tooOld: true,
			reason: 'The delivery has no send time (now), so its age cannot be checked',
		};
	}
	const sentAt = new Date(seconds * 1000).toISOString();
	const limitMs = Math.max(1, maxAgeMinutes) * 60_000;
	// a send time in the future (the platform's clock ahead of n8n's) is accepted
	if (atMs - seconds * 1000 <= limitMs) return { tooOld: false, sentAt, reason: '' };
	return {
		tooOld: true,
		sentAt,
		reason: `The delivery was sent at ${sentAt}, more than ${maxAgeMinutes} minutes ago, and is refused as a possible replay. If it is genuine, redispatch it from the platform's delivery log.`,
	};
}
