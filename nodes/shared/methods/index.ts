// The core's load options, used by more than one node.
export { getEvents } from './loadOptions';
