/**
 * Keeps a scrolling list at its end while the reader is there: new
 * messages, and messages that grow as they stream, bring the view down
 * with them. A reader who scrolls up is left where they are, and a "new
 * messages" button appears when something arrives below; it brings them
 * back down, and following starts again. Whether the reader is at the end
 * is decided when they scroll (not when content arrives, which would take a
 * tall reply's growth for the reader leaving).
 */
export class Follower {
  private following = true;
  /** Our own scroll to the end: its scroll event is not the reader's. */
  private scrolling = false;

  constructor(
    private readonly list: HTMLElement,
    private readonly button: HTMLButtonElement,
  ) {
    list.addEventListener("scroll", () => this.onScroll(), { passive: true });
    button.addEventListener("click", () => this.toEnd());
    // Whatever changes inside the list (a new message, a streamed piece, a card's buttons going away).
    new MutationObserver(() => this.changed()).observe(list, { childList: true, subtree: true, characterData: true });
    // The list itself changing size (a phone's keyboard, the composer growing) keeps the end in view too.
    new ResizeObserver(() => this.changed()).observe(list);
    this.button.hidden = true;
  }

  /** Whether the view follows the end now (tests and the composer read it). */
  get atEnd(): boolean {
    return this.following;
  }

  /** Scrolls to the end and follows again (the button; a message the reader sends). */
  toEnd(): void {
    this.following = true;
    this.button.hidden = true;
    this.scrollDown();
  }

  private changed(): void {
    if (this.following) this.scrollDown();
    else if (this.distance() > 0) this.button.hidden = false;
  }

  private distance(): number {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight;
  }

  private scrollDown(): void {
    if (this.distance() <= 1) return;
    this.scrolling = true;
    this.list.scrollTop = this.list.scrollHeight;
  }

  private onScroll(): void {
    if (this.scrolling) {
      this.scrolling = false;
      // Content may have grown again since: still following.
      if (this.following) return;
    }
    this.following = this.distance() < 48;
    if (this.following) this.button.hidden = true;
  }
}
