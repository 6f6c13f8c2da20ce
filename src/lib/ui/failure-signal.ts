// Moved to the run layer; the views that still import it from here keep working.
export { failureSignal, settlesWithin } from '../run/failure-signal';
