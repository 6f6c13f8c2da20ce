/**
 * Keyboard focus for a pair of buttons that disable each other (Train and Stop): a focused button
 * that disables itself drops the focus to the page, and a keyboard or screen-reader user loses
 * their place. Focus goes to the partner instead, once the partner is enabled, unless the user
 * has moved it somewhere else meanwhile.
 */
export class FocusHandoff {
  /** The button focus should go to once it is enabled, and the one pressed. */
  private pending = $state.raw<{ to: HTMLButtonElement; from: HTMLButtonElement | undefined } | null>(null);

  /** Asks for focus to go from the pressed button `from` to `to` when it can. */
  to(to: HTMLButtonElement | undefined, from: HTMLButtonElement | undefined): void {
    const pending = to ? { to, from } : null;
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
    // Still on the pressed button, or dropped to the page because it disabled itself; anywhere
    // else, the user has moved on and keeps their focus.
    const waiting =
      active === p.from || ((active === null || active === document.body) && p.from?.disabled === true);
    if (!waiting) {
      this.pending = null; // the user went elsewhere
      return;
    }
    if (p.to.disabled) return;
    p.to.focus();
    this.pending = null;
  }
}
