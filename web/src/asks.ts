import { h } from "./dom.js";

/** `approval.requested`'s data (and an entry of `GET .../approvals`). */
export interface ApprovalNotice {
  id: string;
  tool: string;
  arguments: unknown;
  expires_at: string;
}

/** `question.asked`'s data (and an entry of `GET .../approvals`' questions). */
export interface QuestionNotice {
  id: string;
  question: string;
  options?: string[];
  expires_at: string;
}

export interface AskActions {
  /** Sends the person's decision on an approval request. */
  decide(id: string, decision: "allow" | "deny" | "allow_session"): Promise<void>;
  /** Sends the person's answer to the question (the session's next message). */
  answer(text: string): void;
  /** Whether a question waits now (the composer then takes its answer, even while a turn runs). */
  questionWaiting(waiting: boolean): void;
}

/** "4:05 left", or "time is up" once past. */
function timeLeft(expiresAt: number, now: number): string {
  const seconds = Math.max(0, Math.ceil((expiresAt - now) / 1000));
  if (seconds === 0) return "time is up";
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} left`;
}

/**
 * What waits for the person in the open session, as cards above the
 * composer: each tool call under approval "ask" with its arguments and
 * Allow / Deny / Allow for this session and the time left; each ask_user
 * question with its options as buttons (or typed in the composer). A card
 * goes when its request is resolved, wherever that happened (both streams
 * tell, so cards are keyed by id).
 */
export class AskCards {
  private readonly cards = new Map<string, { element: HTMLElement; expiresAt: number; kind: "approval" | "question" }>();
  private readonly done = new Set<string>();
  private ticking: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly actions: AskActions,
  ) {}

  get questionWaiting(): boolean {
    return [...this.cards.values()].some((card) => card.kind === "question");
  }

  requested(notice: ApprovalNotice): void {
    if (this.cards.has(notice.id) || this.done.has(notice.id)) return;
    const buttons = h("div", { class: "row ask-actions" });
    const card = h(
      "article",
      { class: "ask approval", attrs: { "data-id": notice.id, "aria-label": `${notice.tool} waits for your approval` } },
      h("p", { class: "ask-title" }, h("strong", { text: notice.tool }), " wants to run"),
      h("pre", { class: "ask-args", text: JSON.stringify(notice.arguments, null, 2) ?? "" }),
      buttons,
    );
    const choices = [
      { decision: "allow", text: "Allow", class: "primary" },
      { decision: "deny", text: "Deny", class: "danger" },
      { decision: "allow_session", text: "Allow for this session", class: "quiet" },
    ] as const;
    for (const choice of choices) {
      const button = h("button", { class: choice.class, text: choice.text, attrs: { type: "button", "data-decision": choice.decision } });
      button.addEventListener("click", () => {
        for (const b of buttons.querySelectorAll("button")) b.disabled = true;
        void this.actions.decide(notice.id, choice.decision).finally(() => this.resolved(notice.id));
      });
      buttons.append(button);
    }
    buttons.append(h("span", { class: "ask-time" }));
    this.add(notice.id, card, Date.parse(notice.expires_at), "approval");
  }

  asked(notice: QuestionNotice): void {
    if (this.cards.has(notice.id) || this.done.has(notice.id)) return;
    const options = h("div", { class: "row ask-actions" });
    for (const option of notice.options ?? []) {
      const button = h("button", { class: "option", text: option, attrs: { type: "button" } });
      button.addEventListener("click", () => this.actions.answer(option));
      options.append(button);
    }
    options.append(h("span", { class: "ask-time" }));
    const card = h(
      "article",
      { class: "ask question", attrs: { "data-id": notice.id, "aria-label": "The agent asks you" } },
      h("p", { class: "ask-title", text: "The agent asks" }),
      h("p", { class: "ask-question", text: notice.question }),
      options,
      h("p", { class: "ask-hint", text: notice.options?.length ? "Pick one, or type your answer below." : "Type your answer below." }),
    );
    this.add(notice.id, card, Date.parse(notice.expires_at), "question");
  }

  /** A request was decided (or answered, or ran out of time): its card goes. */
  resolved(id: string): void {
    this.done.add(id);
    const card = this.cards.get(id);
    if (!card) return;
    card.element.remove();
    this.cards.delete(id);
    this.update();
  }

  clear(): void {
    this.cards.clear();
    this.done.clear();
    this.root.replaceChildren();
    this.update();
  }

  private add(id: string, element: HTMLElement, expiresAt: number, kind: "approval" | "question"): void {
    this.cards.set(id, { element, expiresAt, kind });
    this.root.append(element);
    this.update();
    element.querySelector("button")?.focus();
  }

  private update(): void {
    this.root.hidden = this.cards.size === 0;
    this.actions.questionWaiting(this.questionWaiting);
    this.tick();
    if (this.cards.size > 0 && this.ticking === undefined) this.ticking = setInterval(() => this.tick(), 1000);
    if (this.cards.size === 0 && this.ticking !== undefined) {
      clearInterval(this.ticking);
      this.ticking = undefined;
    }
  }

  private tick(): void {
    const now = Date.now();
    for (const card of this.cards.values()) {
      const time = card.element.querySelector(".ask-time");
      if (time && Number.isFinite(card.expiresAt)) time.textContent = timeLeft(card.expiresAt, now);
    }
  }
}
