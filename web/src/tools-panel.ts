import { type Api, errorOf } from "./api.js";
import { h } from "./dom.js";

/**
 * The Tools panel: every tool the gateway has (`GET /v1/tools`), where it
 * comes from, what decides whether it is on, which agents are offered it
 * and its approval policy; and a switch for each that writes the config
 * file (`PUT /v1/tools/<name>/state`) and takes effect from the next turn.
 * A tool an environment variable switches is shown locked, naming it.
 */

/** A tool as `GET /v1/tools` lists it. */
export interface ToolInfo {
  name: string;
  origin: string;
  enabled: boolean;
  source: "default" | "config" | "env";
  env_var?: string;
  agents: string[];
  approval: "allow" | "ask" | "deny";
  agent_approvals?: Record<string, string>;
}

/** What the panel says of a switch's source. */
function sourceText(tool: ToolInfo): string {
  if (tool.source === "env") return `Locked: ${tool.env_var ?? "an environment variable"} sets it`;
  if (tool.source === "config") return "Set in the config file";
  return `Its default (${tool.enabled ? "on" : "off"})`;
}

function agentsText(tool: ToolInfo): string {
  if (tool.agents.length > 0) return `Offered to ${tool.agents.join(", ")}`;
  if (!tool.enabled) return "Offered to no agent";
  if (tool.approval === "deny") return "Offered to no agent: its approval is deny";
  return "On, but offered to no agent (their tools lists or settings leave it out)";
}

/** The panel, for the rest of the page: open it (the first screen's "Switch it on in Tools"). */
export interface ToolsPanel {
  open(): void;
}

/** The panel's dialog, built once, opened by `opener`; `changed` is told after a switch took (the agents' tool lists changed). */
export function mountToolsPanel(api: Api, opener: HTMLButtonElement, changed: () => void = () => {}): ToolsPanel {
  const list = h("ul", { class: "tool-list", attrs: { "aria-labelledby": "tools-heading" } });
  const summary = h("p", { class: "note tools-summary", attrs: { role: "status" } });
  const close = h("button", { class: "quiet tools-close", text: "Close", attrs: { type: "button" } });
  const dialog = h(
    "dialog",
    { class: "tools-dialog", attrs: { id: "tools-dialog", "aria-labelledby": "tools-heading" } },
    h(
      "div",
      { class: "tools-body" },
      h("div", { class: "tools-head" }, h("h2", { text: "Tools", attrs: { id: "tools-heading" } }), close),
      h("p", {
        class: "note",
        text: "A switch writes tools.<name>.enabled to the gateway's config file: it counts from the next turn, and after a restart. A tool an environment variable switches is locked here.",
      }),
      summary,
      list,
    ),
  );
  document.body.append(dialog);

  const rows = new Map<string, HTMLLIElement>();

  const count = (tools: readonly ToolInfo[]) => {
    const on = tools.filter((tool) => tool.enabled).length;
    summary.textContent = `${tools.length} tools, ${on} on`;
  };
  let shown: ToolInfo[] = [];

  const row = (tool: ToolInfo, result?: { text: string; error: boolean }): HTMLLIElement => {
    const locked = tool.source === "env";
    const toggle = h("button", {
      class: "switch",
      title: locked ? `${tool.env_var} sets it` : tool.enabled ? `Switch ${tool.name} off` : `Switch ${tool.name} on`,
      attrs: { type: "button", role: "switch", "aria-checked": String(tool.enabled), "aria-label": `${tool.name} enabled` },
    });
    toggle.disabled = locked;
    const outcome = h("p", { class: `tool-result${result?.error ? " error" : ""}`, attrs: { role: "status" } });
    outcome.textContent = result?.text ?? "";
    outcome.hidden = result === undefined;
    const overrides = Object.entries(tool.agent_approvals ?? {}).map(([agent, policy]) => `${agent}: ${policy}`);
    const item = h(
      "li",
      { class: `tool${tool.enabled ? " on" : ""}${locked ? " locked" : ""}`, attrs: { "data-tool": tool.name, "data-source": tool.source } },
      h(
        "div",
        { class: "tool-top" },
        h("span", { class: "tool-name", text: tool.name }),
        h("span", { class: `approval approval-${tool.approval}`, text: tool.approval, title: `Approval policy: ${tool.approval}` }),
        toggle,
      ),
      h(
        "p",
        { class: "tool-line" },
        h("span", { class: "tool-origin", text: tool.origin }),
        " · ",
        h("span", { class: `tool-source source-${tool.source}`, text: sourceText(tool) }),
      ),
      h("p", { class: "tool-line tool-agents", text: agentsText(tool) }),
      overrides.length > 0 && h("p", { class: "tool-line tool-overrides", text: `AGENT.md approval: ${overrides.join(", ")}` }),
      outcome,
    );
    toggle.addEventListener("click", () => void flip(tool, item, toggle, outcome));
    return item;
  };

  const replace = (tool: ToolInfo, result?: { text: string; error: boolean }) => {
    const next = row(tool, result);
    rows.get(tool.name)?.replaceWith(next);
    rows.set(tool.name, next);
    shown = shown.map((old) => (old.name === tool.name ? tool : old));
    count(shown);
  };

  async function flip(tool: ToolInfo, item: HTMLLIElement, toggle: HTMLButtonElement, outcome: HTMLParagraphElement): Promise<void> {
    const enabled = !tool.enabled;
    toggle.disabled = true;
    item.classList.add("saving");
    outcome.hidden = false;
    outcome.className = "tool-result";
    outcome.textContent = "Writing the config file…";
    try {
      const res = await api.fetch(`v1/tools/${encodeURIComponent(tool.name)}/state`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ enabled }),
      });
      if (!res.ok) throw await errorOf(res);
      const body = (await res.json()) as { tool: ToolInfo; config_file: string; written: boolean };
      const where = body.written ? `written to ${body.config_file}` : `${body.config_file} says so already`;
      replace(body.tool, { text: `${enabled ? "On" : "Off"} from the next turn (${where}).`, error: false });
      changed();
    } catch (error) {
      toggle.disabled = tool.source === "env";
      item.classList.remove("saving");
      outcome.className = "tool-result error";
      outcome.textContent = `Not changed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  async function load(): Promise<void> {
    summary.textContent = "Loading…";
    try {
      shown = (await api.json<{ tools: ToolInfo[] }>("v1/tools")).tools;
    } catch (error) {
      list.replaceChildren();
      summary.textContent = `The tool list could not be read: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    rows.clear();
    list.replaceChildren(
      ...shown.map((tool) => {
        const item = row(tool);
        rows.set(tool.name, item);
        return item;
      }),
    );
    count(shown);
  }

  const open = () => {
    dialog.showModal();
    opener.setAttribute("aria-expanded", "true");
    void load();
  };
  opener.addEventListener("click", open);
  close.addEventListener("click", () => dialog.close());
  // A click on the backdrop (the dialog itself: its content fills it) closes it too.
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener("close", () => opener.setAttribute("aria-expanded", "false"));
  return { open };
}
