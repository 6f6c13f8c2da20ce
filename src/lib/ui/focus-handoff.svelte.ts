/**
 * Keyboard focus for buttons that disable themselves while their work runs (Start and Stop, Run,
 * Evaluate): a focused button that disables itself drops the focus to the page, and a keyboard or
 * screen-reader user loses their place. Focus goes to the partner instead (Stop, or the button
 * itself once enabled again), and with `back`, on from the partner to `back` when the partner
 * disables itself in turn (the work ended on its own), unless the user has moved it meanwhile.
 */
export class FocusHandoff {
  /** The button focus should go to once it is enabled, the one it leaves, and where it goes after. */
  private pending = $state.raw<{
    to: HTMLButtonElement;
    from: HTMLButtonElement | undefined;
    back: HTMLButtonElement | undefined;
  } | null>(null);

  /**
   * Asks for focus to go from the pressed button `from` to `to` when it can; and with `back`,
   * from `to` to `back` once `to` is disabled and `back` enabled.
   */
  to(to: HTMLButtonElement | undefined, from: HTMLButtonElement | undefined, back?: HTMLButtonElement): void {
    this.set(to ? { to, from, back } : null);
  }

  private set(pending: typeof this.pending): void {
    this.pending = pending;
    if (!pending) return;
    // A click anywhere meanwhile (the user doing something else) cancels the handoff.
    const cancel = () => {
      if (this.pending === pending) this.pending = null;
    };
    document.addEventListener('pointerdown', cancel, { capture: true, once: true });
  }

  /**
   * Moves focus to the partner if it is enabled and focus is still on the pressed button, or was
   * dropped to the page by it.
   * Call it from an `$effect` that also reads the state the buttons' `disabled` depends on, so it
   * runs again when that changes.
   */
  settle(): void {
    const p = this.pending;
    if (!p) return;
    const active = document.activeElement;
    // Still on the pressed button, or dropped to the page because it disabled itself (a button
    // that hands the focus back to itself is enabled again by now); anywhere else, the user has
    // moved on and keeps their focus.
    const dropped =
      (active === null || active === document.body) && (p.from?.disabled === true || p.from === p.to);
    const waiting = active === p.from || dropped;
    if (!waiting) {
      this.pending = null; // the user went elsewhere
      return;
    }
    if (p.to.disabled) return;
    if (active !== p.to) p.to.focus();
    this.set(p.back && p.back !== p.to ? { to: p.back, from: p.to, back: undefined } : null);
  }
}
