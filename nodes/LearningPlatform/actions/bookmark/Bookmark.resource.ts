import { resourceProperties } from '../operations';
import * as create from './create.operation';

export const operations = { create };

export const description = resourceProperties('bookmark', operations, 'create');
