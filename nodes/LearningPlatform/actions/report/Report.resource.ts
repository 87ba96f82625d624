import { resourceProperties } from '../operations';
import * as getResult from './getResult.operation';
import { reportOperations } from './reports';

export const operations = { ...reportOperations, getResult };

export const description = resourceProperties('report', operations, 'getActivityCompletions');
