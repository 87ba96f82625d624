// The deliveries room's face: whether a request is a genuine delivery (signature, token, age),
// whether it repeats one that already started an execution (the repeat key, the ledger and its
// stored form), and keeping what it wrote into static data for n8n's save.
export {
	admitDelivery,
	refusalLogLevel,
	type Admission,
	type AdmissionRules,
	type RefusalReason,
} from './admission';
export type { AttemptResponse } from './ledger';
export { repeatKey, type Destination } from './repeatKey';
export {
	computeSignature,
	verifyDelivery,
	verifySignature,
	type VerificationFailure,
	type VerificationResult,
} from './signature';
export { keepChangedUntilAnswered } from './staticDataSave';
