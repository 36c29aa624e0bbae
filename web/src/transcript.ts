import { h } from "./dom.js";

/** Something a chat user sees (a `delivery` event, an entry of `delivered`). */
export interface Delivery {
  from: string;
  text: string;
}

/** A message of `GET .../history`, in OpenAI's roles. */
export interface HistoryMessage {
  role: string;
  content?: unknown;
  tool_calls?: { function?: { name?: unknown } }[];
}

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

function chip(name: string, status: ChipStatus): HTMLElement {
  return h(
    "span",
    { class: `chip ${status}`, attrs: { "data-status": status, "data-tool": name } },
    h("span", { class: "chip-name", text: name }),
    h("span", { class: "chip-status", text: STATUS_TEXT[status] }),
  );
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

  constructor(private readonly list: HTMLOListElement) {}

  clear(): void {
    this.list.replaceChildren();
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

  note(text: string): void {
    this.add(h("li", { class: "msg note" }, h("pre", { class: "text", text })));
  }

  error(code: string, message: string): void {
    this.add(h("li", { class: "msg error", attrs: { role: "alert" } }, h("div", { class: "who", text: code }), h("div", { class: "text", text: message })));
  }

  /** A new turn of the person's own message, to fill as its events arrive. */
  turn(agent: string): TurnView {
    return new TurnView(agent, (element) => this.add(element));
  }

  /** A session's history: its messages, the tool calls as chips (their results are the model's, never shown). */
  history(messages: readonly HistoryMessage[], agent: string): void {
    for (const message of messages) {
      const text = textOf(message.content);
      if (message.role === "user") this.user(text);
      else if (message.role === "assistant") {
        if (text.trim() !== "") this.add(agentElement(agent, text));
        const names = (message.tool_calls ?? []).map((call) => String(call.function?.name ?? "tool"));
        if (names.length > 0) this.add(h("li", { class: "tools" }, ...names.map((name) => chip(name, "done"))));
      }
    }
  }

  private add(element: HTMLElement): void {
    // Follow the conversation while the person is at its end; leave them where they are when they scrolled up.
    const atEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 48;
    this.list.append(element);
    if (atEnd) this.list.scrollTop = this.list.scrollHeight;
  }
}

function agentElement(agent: string, text: string): HTMLElement {
  return h("li", { class: "msg agent" }, h("div", { class: "who", text: agent }), h("div", { class: "text", text }));
}

function deliveryElement(delivery: Delivery, agent: string, label?: string): HTMLElement {
  const tag = label ? h("span", { class: "tag", text: label }) : null;
  if (delivery.from === "agent")
    return h("li", { class: "msg agent" }, h("div", { class: "who", text: agent }, tag), h("div", { class: "text", text: delivery.text }));
  if (delivery.from === "command") return h("li", { class: "msg command" }, tag, h("pre", { class: "text", text: delivery.text }));
  return h("li", { class: "msg tool-output" }, h("div", { class: "who", text: delivery.from }, tag), h("pre", { class: "text", text: delivery.text }));
}

/**
 * One message's turn as it streams: the model's text grows in place; a tool
 * call closes that text and adds a chip (running, then ok or error) to the
 * row of chips; a tool's output for the user, the final reply and command
 * replies are deliveries, in the order they come.
 */
export class TurnView {
  private draft: { element: HTMLElement; text: HTMLElement } | undefined;
  private tools: HTMLElement | undefined;
  private readonly chips = new Map<string, HTMLElement>();
  /** The `delivery` events this message's stream carried (its own, not those kept from before). */
  ownDeliveries = 0;

  constructor(
    private readonly agent: string,
    private readonly add: (element: HTMLElement) => void,
  ) {}

  textDelta(text: string): void {
    if (!this.draft) {
      const element = agentElement(this.agent, "");
      element.classList.add("streaming");
      this.draft = { element, text: element.querySelector(".text") as HTMLElement };
      this.tools = undefined;
      this.add(element);
    }
    this.draft.text.append(document.createTextNode(text));
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
      this.draft.text.textContent = delivery.text;
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
    this.add(h("li", { class: "msg error", attrs: { role: "alert" } }, h("div", { class: "who", text: code }), h("div", { class: "text", text: message })));
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
    this.draft?.element.classList.remove("streaming");
    this.draft = undefined;
  }
}
