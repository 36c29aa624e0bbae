import { type Api, ApiError } from "./api.js";
import { h } from "./dom.js";
import { parseKey } from "./session-key.js";

/** An entry of `GET /v1/sessions`. */
export interface SessionEntry {
  key: string;
  agent: string;
  messages: number;
  updated_at: string;
}

/** Sessions the list asks for. */
const LIST_LIMIT = 50;

/** "5 min ago", "yesterday": when a session last changed, roughly. */
function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/**
 * The session list: the gateway's sessions, newest first (`GET
 * /v1/sessions`), the open one marked. A gateway without the list (404)
 * leaves only the "new session" box.
 */
export class SessionList {
  entries: SessionEntry[] = [];
  available = true;
  private current = "";

  constructor(
    private readonly api: Api,
    private readonly list: HTMLUListElement,
    private readonly note: HTMLElement,
    private readonly onPick: (key: string) => void,
  ) {}

  async load(): Promise<void> {
    if (!this.available) return;
    try {
      const body = await this.api.json<{ sessions: SessionEntry[] }>(`v1/sessions?limit=${LIST_LIMIT}`);
      this.entries = body.sessions;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.available = false;
        this.list.hidden = true;
        this.note.textContent = "This gateway keeps no session list; start a session by name.";
        this.note.hidden = false;
        return;
      }
      throw error;
    }
    this.render();
  }

  /** Marks the open session (listed first while it has no message yet). */
  select(key: string): void {
    this.current = key;
    this.render();
  }

  private render(): void {
    if (!this.available) return;
    const entries = [...this.entries];
    if (this.current !== "" && !entries.some((entry) => entry.key === this.current)) {
      const parsed = parseKey(this.current);
      entries.unshift({ key: this.current, agent: parsed?.agent ?? "", messages: 0, updated_at: "" });
    }
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const parsed = parseKey(entry.key);
        const name = parsed ? (parsed.channel === "http" ? parsed.chatId : `${parsed.channel}: ${parsed.chatId}`) : entry.key;
        const meta = [entry.agent, `${entry.messages} msg`, entry.updated_at ? ago(entry.updated_at) : "new"].join(" · ");
        const button = h(
          "button",
          { class: "session", title: entry.key, attrs: { type: "button", "data-key": entry.key } },
          h("span", { class: "session-name", text: name }),
          h("span", { class: "session-meta", text: meta }),
        );
        if (entry.key === this.current) button.setAttribute("aria-current", "true");
        button.addEventListener("click", () => this.onPick(entry.key));
        return h("li", {}, button);
      }),
    );
  }
}
