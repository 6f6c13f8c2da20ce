// The run's id moved to the run layer (`run/pipeline.ts`); views that still import it from here keep working.
export { newRunId } from '../run/pipeline';
