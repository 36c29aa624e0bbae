import { h } from "./dom.js";

/** An agent as `GET /v1/agents` lists it. */
export interface AgentEntry {
  id: string;
  name?: string;
  description?: string;
  model?: string;
  /** Its model entry's provider: `builtin` is the offline model. */
  provider?: string;
  /** Its effective tools. */
  tools?: string[];
}

/** What the first screen's buttons do: send a message as if typed. */
export type Try = (text: string) => void;

const call = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args)}`;

/** Things to try on the built-in model, with the tools this agent has. */
function examples(tools: readonly string[]): { label: string; text: string }[] {
  const list: { label: string; text: string }[] = [{ label: "Say hello", text: "Hello! What can you do?" }];
  if (tools.includes("todo")) {
    list.push({
      label: "Make a plan",
      text: call("todo", {
        action: "write",
        todos: [
          { id: "1", content: "Read the README", status: "completed" },
          { id: "2", content: "Try a tool call", status: "in_progress" },
          { id: "3", content: "Connect a real model", priority: "high" },
        ],
      }),
    });
  }
  if (tools.includes("subagent")) list.push({ label: "Run a subagent", text: call("subagent", { task: "say hello", label: "demo" }) });
  if (tools.includes("list_dir")) list.push({ label: "List the workspace", text: call("list_dir", { path: "." }) });
  return list;
}

/**
 * The first screen of an empty session: who answers (the agent and its
 * model) and, when that is the built-in offline model, what it does and a
 * few things to try, each a message sent with one click: plain text, and
 * `CALL <tool> <json>` lines that make it call a tool. An agent without the
 * todo tool is told how to turn it on (the Tools panel, or the environment).
 */
export function welcomeCard(agent: AgentEntry, tryIt: Try, openTools?: () => void): HTMLElement {
  const name = agent.name && agent.name !== agent.id ? agent.name : agent.id;
  const card = h(
    "li",
    { class: "welcome", attrs: { "aria-label": "Getting started" } },
    h("h2", { text: `Hello, this is ${name}` }),
    agent.description ? h("p", { class: "description", text: agent.description }) : null,
    h("p", { class: "model" }, "Model: ", h("code", { text: agent.model ?? "?" }), agent.provider ? ` (${agent.provider})` : ""),
  );
  if (agent.provider !== "builtin") {
    card.append(h("p", { text: "Write a message below to start." }));
    return card;
  }
  const tools = agent.tools ?? [];
  card.append(
    h(
      "p",
      {},
      "This is PicoClaw's built-in offline model: no key, no network. It echoes what you write, and a message made only of lines ",
      h("code", { text: "CALL <tool> <json arguments>" }),
      " makes it call those tools and show what they returned. Try one:",
    ),
  );
  const buttons = examples(tools).map(({ label, text }) => {
    const button = h("button", { class: "try", attrs: { type: "button", title: text } }, h("span", { class: "try-label", text: label }), h("code", { text }));
    button.addEventListener("click", () => tryIt(text));
    return button;
  });
  card.append(h("div", { class: "tries" }, ...buttons));
  if (!tools.includes("todo")) {
    const hint = h("p", { class: "welcome-note" }, "The plan tool, ", h("code", { text: "todo" }), ", is off. ");
    if (openTools) {
      const open = h("button", { class: "link", text: "Switch it on in Tools", attrs: { type: "button" } });
      open.addEventListener("click", openTools);
      hint.append(open, " or start the gateway with ");
    } else hint.append("Start the gateway with ");
    hint.append(h("code", { text: "PICOCLAW_TOOLS_TODO_ENABLED=true" }), ".");
    card.append(hint);
  }
  card.append(
    h(
      "p",
      { class: "welcome-note" },
      "To talk to a real model, add an entry to ",
      h("code", { text: "model_list" }),
      " in picoclaw.config.json and set ",
      h("code", { text: "agents.defaults.model_name" }),
      ".",
    ),
  );
  return card;
}
