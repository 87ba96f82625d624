// Deleting the subscription at the platform, and forgetting it in static data.
import type { IDataObject } from 'n8n-workflow';

import { statusOf } from '../../shared/transport';
import type { SubscriptionRequests } from './requests';
import { clearStoredSubscription, readStoredSubscription } from './stored';

/**
 * Deletes the stored subscription; a 404 means it is already gone. Other failures keep the data
 * for a later attempt. With `keep` (recovering missed deliveries) a production subscription stays,
 * so the platform logs what it cannot deliver while the workflow is inactive.
 */
export async function deleteSubscription(
	api: SubscriptionRequests,
	staticData: IDataObject,
	{ keep = false }: { keep?: boolean } = {},
): Promise<boolean> {
	const { subscriptionId, test } = readStoredSubscription(staticData);
	if (keep && !test && subscriptionId !== undefined) return true;
	if (subscriptionId === undefined) {
		clearStoredSubscription(staticData);
		return true;
	}
	return await deleteSubscriptionById(api, staticData, subscriptionId);
}

/**
 * Deletes subscription `subscriptionId` (a 404 means it is already gone) and forgets it if static
 * data still holds it; false when the platform could not be asked.
 */
export async function deleteSubscriptionById(
	api: SubscriptionRequests,
	staticData: IDataObject,
	subscriptionId: number,
): Promise<boolean> {
	try {
		await api.remove(subscriptionId);
	} catch (error) {
		if (statusOf(error) !== 404) return false;
	}
	if (readStoredSubscription(staticData).subscriptionId === subscriptionId)
		clearStoredSubscription(staticData);
	return true;
}
