/**
 * A module the page fetches apart from its main bundle (a dynamic `import()`, a chunk of its own):
 * `lazyModule(() => import('./x'))` gives the function that loads it. The first call fetches it;
 * later calls share that fetch, and once one has failed, the next call tries again.
 */
export function lazyModule<M>(load: () => Promise<M>): () => Promise<M> {
  let loading: Promise<M> | null = null;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = null;
      throw err;
    }));
}
