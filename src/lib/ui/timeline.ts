/** The timeline's events and clock, for the components that draw them (DESIGN §9). */
export { now, type EventKind, type Lane, type TimelineEvent } from '../pipeline/events';
