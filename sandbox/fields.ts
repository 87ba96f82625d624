/** The optional custom-field objects shared by reports and the feed (`userdata`, `contentdata`, `sessiondata`). */
import type { Content, Learner, Session } from './types';

/** custom user fields as name-to-value pairs */
export const userData = (l: Learner): Record<string, string> => ({ ...l.customfields });
/** content custom fields as name-to-value pairs ('' when unset) */
export const contentData = (c: Content): Record<string, string> =>
	Object.fromEntries(c.customfields.map((f) => [f.name, f.data]));
export const sessionData = (s: Session): Record<string, string> => ({ ...s.customfields });
