import { hashOf, viewFromHash, type ViewId } from '../view/views';

/**
 * The view the page shows, following the URL hash: a link (`<a href="#runs">`), the back and
 * forward buttons and a typed hash all change it through `hashchange`.
 */
export class ViewState {
  view = $state<ViewId>(viewFromHash(location.hash));
  /** The view changed after the page opened (focus then moves to its heading). */
  moved = $state(false);

  /** Follows the hash until the returned function is called. */
  listen(): () => void {
    const changed = () => {
      const next = viewFromHash(location.hash);
      if (next === this.view) return;
      this.view = next;
      this.moved = true;
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }

  /** Opens `view`, as its link does (a new history entry). */
  open(view: ViewId): void {
    location.hash = hashOf(view);
  }
}
