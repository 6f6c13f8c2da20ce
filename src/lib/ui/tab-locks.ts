// Moved to the run layer; the views that still import it from here keep working.
export { TabLocks } from '../run/tab-locks';
