import { h } from "./dom.js";
import { renderMarkdown, renderToolText } from "./markdown.js";

/** Something a chat user sees (a `delivery` event, an entry of `delivered`). */
export interface Delivery {
  from: string;
  text: string;
}

/** A message of `GET .../history`, in OpenAI's roles. */
export interface HistoryMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
  /** A tool message: the call it answers, and what the user was shown of its result (none when it was silent). */
  tool_call_id?: unknown;
  shown?: unknown;
  is_error?: unknown;
}

/** Sends a message again (an error card's Retry). */
export type Retry = (text: string) => void;

/** The text of a message's content: a string, or the text parts of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: unknown; text?: unknown }) =>
      part.type === "text" && typeof part.text === "string" ? part.text : part.type === "image_url" ? "[image]" : "",
    )
    .filter((text) => text !== "")
    .join("\n");
}

/** The line under a tool's chip: what it is doing. */
const STATUS_TEXT = { running: "running", ok: "ok", error: "error", done: "done" } as const;
type ChipStatus = keyof typeof STATUS_TEXT;

function chip(name: string, status: ChipStatus, label?: string): HTMLElement {
  return h(
    "span",
    { class: `chip ${status}`, attrs: { "data-status": status, "data-tool": name } },
    h("span", { class: "chip-name", text: name }),
    label ? h("span", { class: "chip-label", text: label }) : null,
    h("span", { class: "chip-status", text: STATUS_TEXT[status] }),
  );
}

/** A subagent's label from its call's arguments (`subagent`, `spawn`, `delegate`): what its chip names. */
function labelOf(name: string, args: unknown): string | undefined {
  if (!/^(subagent|spawn|delegate)$/.test(name) || typeof args !== "string") return undefined;
  try {
    const parsed = JSON.parse(args) as { label?: unknown; agent?: unknown };
    const label = typeof parsed.label === "string" ? parsed.label : typeof parsed.agent === "string" ? parsed.agent : undefined;
    return label?.slice(0, 40);
  } catch {
    return undefined;
  }
}

function setChip(element: HTMLElement, status: ChipStatus): void {
  element.className = `chip ${status}`;
  element.dataset.status = status;
  element.querySelector(".chip-status")!.textContent = STATUS_TEXT[status];
}

/**
 * The conversation as the person sees it: their messages, the agent's
 * replies (streamed in as they come), what tools show them, tool activity
 * as compact chips, command replies and errors. Silent tool results are
 * never here: the page only ever gets the texts meant for the user.
 */
export class Transcript {
  /** The open session's agent: who "agent" deliveries are from. */
  agent = "agent";
  /** Sends a failed message again; set by the conversation. */
  retry: Retry | undefined;

  constructor(private readonly list: HTMLOListElement) {}

  clear(): void {
    this.list.replaceChildren();
  }

  /** Whether nothing of the conversation is shown (the first screen is then). */
  get empty(): boolean {
    return this.list.querySelector(":scope > :not(.welcome):not(.remark)") === null;
  }

  /** The first screen's card, at the end of the list (an empty session's only item). */
  showWelcome(element: HTMLElement): void {
    this.dropWelcome();
    this.add(element);
  }

  /** The first screen goes once the conversation starts. */
  dropWelcome(): void {
    for (const element of this.list.querySelectorAll(":scope > .welcome")) element.remove();
  }

  user(text: string): void {
    // A system note the gateway put into the conversation (a background subagent's result) is not the person's.
    if (text.startsWith("[System note")) this.note(text);
    else this.add(h("li", { class: "msg user" }, h("div", { class: "who", text: "You" }), h("div", { class: "text", text })));
  }

  /** A delivery outside the person's own message: from history's view, or arriving on the session's event stream. */
  delivery(delivery: Delivery, label?: string): void {
    const element = deliveryElement(delivery, this.agent, label);
    this.add(element);
  }

  /** A remark of the page's own about what it shows (the address named no session it can open): it leaves the first screen be. */
  remark(text: string): void {
    this.add(h("li", { class: "msg note remark" }, h("pre", { class: "text", text })));
  }

  note(text: string): void {
    this.add(h("li", { class: "msg note" }, h("pre", { class: "text", text })));
  }

  /** An error; with `text`, the message that failed, and a Retry button that sends it again. */
  error(code: string, message: string, text?: string): void {
    this.add(errorCard(code, message, text === undefined ? undefined : this.retryOf(text)));
  }

  /** A new turn of the person's own message, to fill as its events arrive. */
  turn(agent: string, text?: string): TurnView {
    return new TurnView(agent, (element) => this.add(element), text === undefined ? undefined : this.retryOf(text));
  }

  private retryOf(text: string): (() => void) | undefined {
    const retry = this.retry;
    return retry ? () => retry(text) : undefined;
  }

  /**
   * A session's history as it looked live: its messages; the tool calls as
   * chips, one row for the calls between two things shown (as the live view
   * has them); and what the user was shown of each result (`shown`: tool
   * output), in order. Silent results are the model's, never shown.
   */
  history(messages: readonly HistoryMessage[], agent: string): void {
    let row: HTMLElement | undefined;
    const names = new Map<string, string>();
    const chips = new Map<string, HTMLElement>();
    const add = (element: HTMLElement) => {
      row = undefined;
      this.add(element);
    };
    for (const message of messages) {
      const text = textOf(message.content);
      if (message.role === "user") {
        row = undefined;
        this.user(text);
      } else if (message.role === "assistant") {
        if (text.trim() !== "") add(agentElement(agent, text));
        for (const call of message.tool_calls ?? []) {
          const name = String(call.function?.name ?? "tool");
          if (!row) {
            row = h("li", { class: "tools" });
            this.add(row);
          }
          const element = chip(name, "done", labelOf(name, call.function?.arguments));
          row.append(element);
          if (typeof call.id === "string") {
            names.set(call.id, name);
            chips.set(call.id, element);
          }
        }
      } else if (message.role === "tool") {
        const id = String(message.tool_call_id ?? "");
        const element = chips.get(id);
        if (element && message.is_error === true) setChip(element, "error");
        if (typeof message.shown === "string" && message.shown !== "") add(deliveryElement({ from: names.get(id) ?? "tool", text: message.shown }, agent));
      }
    }
  }

  /** Appends to the list; the Follower (follow.ts) keeps the end in view while the reader is there. */
  private add(element: HTMLElement): void {
    // Anything of the conversation ends the first screen (a note of the page's own does not).
    if (!element.classList.contains("welcome") && !element.classList.contains("remark")) this.dropWelcome();
    this.list.append(element);
  }
}

/** A block of model text, drawn as Markdown. */
function markdownBlock(text: string): HTMLElement {
  const element = h("div", { class: "text md" });
  renderMarkdown(element, text);
  return element;
}

function agentElement(agent: string, text: string, tag?: HTMLElement | null): HTMLElement {
  return h("li", { class: "msg agent" }, h("div", { class: "who", text: agent }, tag), markdownBlock(text));
}

function deliveryElement(delivery: Delivery, agent: string, label?: string): HTMLElement {
  const tag = label ? h("span", { class: "tag", text: label }) : null;
  if (delivery.from === "agent") return agentElement(agent, delivery.text, tag);
  if (delivery.from === "command") return h("li", { class: "msg command" }, tag, h("pre", { class: "text", text: delivery.text }));
  const body = h("div", { class: "text md" });
  renderToolText(body, delivery.text);
  return h("li", { class: "msg tool-output" }, h("div", { class: "who", text: delivery.from }, tag), body);
}

/** An error, with a Retry button when the message that failed can be sent again. */
function errorCard(code: string, message: string, retry?: () => void): HTMLElement {
  const card = h("li", { class: "msg error", attrs: { role: "alert" } }, h("div", { class: "who", text: code }), h("div", { class: "text", text: message }));
  if (retry) {
    const button = h("button", { class: "retry", text: "Retry", attrs: { type: "button" } });
    button.addEventListener("click", () => {
      button.disabled = true;
      retry();
    });
    card.append(h("div", { class: "actions" }, button));
  }
  return card;
}

/**
 * One message's turn as it streams: the model's text grows in place; a tool
 * call closes that text and adds a chip (running, then ok or error) to the
 * row of chips; a tool's output for the user, the final reply and command
 * replies are deliveries, in the order they come.
 */
export class TurnView {
  private draft: { element: HTMLElement; text: HTMLElement; raw: string; drawn: boolean } | undefined;
  private tools: HTMLElement | undefined;
  private readonly chips = new Map<string, HTMLElement>();
  /** The `delivery` events this message's stream carried (its own, not those kept from before). */
  ownDeliveries = 0;

  constructor(
    private readonly agent: string,
    private readonly add: (element: HTMLElement) => void,
    private readonly retry?: () => void,
  ) {}

  /** The streamed text grows; it is drawn as Markdown once a frame, not once a piece. */
  textDelta(text: string): void {
    if (!this.draft) {
      const element = agentElement(this.agent, "");
      element.classList.add("streaming");
      this.draft = { element, text: element.querySelector(".text") as HTMLElement, raw: "", drawn: true };
      this.tools = undefined;
      this.add(element);
    }
    const draft = this.draft;
    draft.raw += text;
    if (!draft.drawn) return;
    draft.drawn = false;
    requestAnimationFrame(() => {
      if (!draft.drawn) renderMarkdown(draft.text, draft.raw);
      draft.drawn = true;
    });
  }

  /** A subagent started: the running chip of its call (the first without a name of its own) shows its label. */
  subagentLabel(label: string): void {
    for (const element of this.chips.values()) {
      if (element.dataset.status === "running" && /^(subagent|spawn|delegate)$/.test(element.dataset.tool ?? "") && !element.querySelector(".chip-label")) {
        element.querySelector(".chip-name")!.after(h("span", { class: "chip-label", text: label.slice(0, 40) }));
        return;
      }
    }
  }

  toolStart(id: string, name: string): void {
    this.closeDraft();
    if (!this.tools) {
      this.tools = h("li", { class: "tools" });
      this.add(this.tools);
    }
    const element = chip(name, "running");
    this.chips.set(id, element);
    this.tools.append(element);
  }

  toolEnd(id: string, isError: boolean): void {
    const element = this.chips.get(id);
    if (element) setChip(element, isError ? "error" : "ok");
  }

  delivery(delivery: Delivery): void {
    this.ownDeliveries++;
    if (delivery.from === "agent" && this.draft) {
      // The reply the pieces added up to: the streamed text becomes exactly it.
      this.draft.raw = delivery.text;
      this.draft.drawn = true;
      renderMarkdown(this.draft.text, delivery.text);
      this.closeDraft();
      return;
    }
    this.closeDraft();
    this.tools = undefined;
    this.add(deliveryElement(delivery, this.agent));
  }

  /** The message failed: its streamed text was not kept. */
  fail(code: string, message: string): void {
    if (this.draft) this.draft.element.classList.add("unkept");
    this.closeDraft();
    this.markUnfinished();
    this.add(errorCard(code, message, this.retry));
  }

  /** The message was answered (`stoppedReply`: /stop ended it). */
  end(stoppedReply?: string): void {
    this.closeDraft();
    if (stoppedReply !== undefined) {
      this.markUnfinished();
      this.add(h("li", { class: "msg command" }, h("pre", { class: "text", text: stoppedReply })));
    }
  }

  private markUnfinished(): void {
    for (const element of this.chips.values()) if (element.dataset.status === "running") setChip(element, "error");
  }

  private closeDraft(): void {
    const draft = this.draft;
    if (draft && !draft.drawn) {
      draft.drawn = true;
      renderMarkdown(draft.text, draft.raw);
    }
    draft?.element.classList.remove("streaming");
    this.draft = undefined;
  }
}
