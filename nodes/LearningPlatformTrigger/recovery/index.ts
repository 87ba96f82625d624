// The recovery room's face: "Recover Missed Deliveries". Reading the platform's delivery log, one
// run that has the platform redispatch what it could not deliver, when runs happen and how the n8n
// processes agree on them, recovery's share of the API key, and the memory of what was asked.
// Each takes the n8n context the node was handed; within the room, host.ts's small interfaces.
export { isRedispatchNote, takeInRedispatchNote } from './redispatchNote';
export {
	noteRecoveryMark,
	recoverAfterActivation,
	recoverFromDelivery,
	stopRecovering,
} from './schedule';
