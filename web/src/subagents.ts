import { h } from "./dom.js";

export interface SubagentNotice {
  id: string;
  label?: string;
  agent?: string;
}

/**
 * The session's running subagents, from `subagent.start` and `subagent.end`
 * (both the message's stream and the session's event stream tell them, so
 * each is keyed by its id), with a Stop button that sends `/stop`.
 */
export class SubagentList {
  private readonly running = new Map<string, HTMLElement>();
  private readonly ended = new Set<string>();

  constructor(
    private readonly list: HTMLUListElement,
    private readonly empty: HTMLElement,
    private readonly stop: HTMLButtonElement,
  ) {}

  start(notice: SubagentNotice): void {
    if (this.running.has(notice.id) || this.ended.has(notice.id)) return;
    const element = h(
      "li",
      { class: "subagent", attrs: { "data-id": notice.id } },
      h("span", { class: "spinner", attrs: { "aria-hidden": "true" } }),
      h("span", { class: "subagent-label", text: notice.label || notice.id }),
      h("span", { class: "subagent-agent", text: notice.agent ?? "" }),
    );
    this.running.set(notice.id, element);
    this.list.append(element);
    this.update();
  }

  end(notice: SubagentNotice): void {
    this.ended.add(notice.id);
    this.running.get(notice.id)?.remove();
    this.running.delete(notice.id);
    this.update();
  }

  clear(): void {
    this.running.clear();
    this.ended.clear();
    this.list.replaceChildren();
    this.update();
  }

  private update(): void {
    this.empty.hidden = this.running.size > 0;
    this.stop.hidden = this.running.size === 0;
  }
}
