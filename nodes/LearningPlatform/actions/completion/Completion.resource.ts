import { resourceProperties } from '../operations';
import * as getMany from './getMany.operation';

export const operations = { getMany };

export const description = resourceProperties('completion', operations, 'getMany');
