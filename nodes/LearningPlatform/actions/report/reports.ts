// The report types. Adding one: its operation file (fields, `report`, `execute`) and a line here.
import type { Report } from '../../helpers/reports';
import * as getActivityCompletions from './getActivityCompletions.operation';
import * as getAttendance from './getAttendance.operation';
import * as getContent from './getContent.operation';

export const reportOperations = { getActivityCompletions, getAttendance, getContent };

export const REPORTS: Report[] = Object.values(reportOperations).map(
	(operation) => operation.report,
);
