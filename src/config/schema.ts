import { z } from "zod";
import { channelListSchema } from "./channel-schema.js";
import { AGENT_ID, MODEL_NAME } from "./names.js";

/**
 * The shape of `picoclaw.config.json` (README, "Configuration"). Every object is strict:
 * an unknown key is an error that names its JSON path. Defaults live here and
 * nowhere else; `config/picoclaw.schema.json` is generated from this file.
 */

export { AGENT_ID, MODEL_NAME } from "./names.js";

const int = (min: number, max: number) => z.int().min(min).max(max);
const KiB = 1024;
const MiB = 1024 * KiB;

export const subturnSchema = z
  .strictObject({
    max_depth: int(1, 16).default(3).describe("How deep subagents may nest."),
    max_concurrent: int(1, 100).default(5).describe("Running children per parent turn."),
    max_running: int(1, 10_000)
      .default(20)
      .describe(
        "Running subagents in the whole gateway (every session, every depth). A child of a user's turn waits for a place up to concurrency_timeout_ms; a child of a subagent gets an error result at once.",
      ),
    timeout_ms: int(1, 86_400_000).default(300_000).describe("Time limit of one child turn, in ms."),
    concurrency_timeout_ms: int(0, 86_400_000)
      .default(30_000)
      .describe("How long a new child waits for a free place (max_concurrent, max_running) before its call fails, in ms."),
  })
  .prefault({});

export const agentsSchema = z
  .strictObject({
    dir: z.string().min(1).default("agents").describe("Folder of agents/<id>/AGENT.md, relative to the config file."),
    default: z.string().regex(AGENT_ID, "expected an agent id").default("main").describe("Agent used when a request names none."),
    defaults: z
      .strictObject({
        model_name: z.string().min(1).default("local").describe("A model_name from model_list."),
        max_tool_iterations: int(1, 1000).default(20).describe("Model round trips per turn before the turn stops."),
        max_tokens: int(1, 10_000_000).optional().describe("max_tokens for every model entry that does not set its own (PicoClaw's place for it)."),
        temperature: z.number().min(0).max(2).optional().describe("temperature for every model entry that does not set its own (PicoClaw's place for it)."),
        max_history_messages: int(10, 100_000).default(500).describe("Messages a session keeps; older exchanges are dropped first."),
        max_history_bytes: int(16 * KiB, 64 * MiB)
          .default(4 * MiB)
          .describe(
            "Bytes of history a session keeps (UTF-8 bytes of the messages' JSON); older exchanges are dropped first, and an exchange over it alone is cut to fit, with a note.",
          ),
        summarize: z
          .boolean()
          .default(false)
          .describe(
            "When old exchanges no longer fit the model's context window, replace them with a short summary written by the agent's own model (kept in the session's history) instead of leaving them out of the request.",
          ),
        turn_timeout_ms: int(1, 86_400_000)
          .default(900_000)
          .describe(
            "Time limit of one turn in ms (model calls and tools together); past it the turn is aborted, its history unchanged (but for a summary written by agents.defaults.summarize).",
          ),
        subturn: subturnSchema,
      })
      .prefault({}),
  })
  .prefault({});

/** Where histories are kept (SESSION_STORES), how many sessions (and how much of their history) the gateway holds in memory and on disk. */
export const SESSION_STORES = ["jsonl", "memory"] as const;

export const sessionSchema = z
  .strictObject({
    store: z
      .enum(SESSION_STORES)
      .default("jsonl")
      .describe(
        '"jsonl": every root session\'s history is kept in session.dir (a JSONL file per session) and survives restarts; "memory": histories live in memory only and end with the process.',
      ),
    dir: z
      .string()
      .min(1)
      .default("sessions")
      .describe("Folder of the session files (store jsonl), relative to the config file. One gateway process owns it at a time."),
    max_stored: int(1, 10_000_000)
      .default(100_000)
      .describe("Sessions kept on disk at most (store jsonl); past it the session changed least recently is removed, with a log line."),
    max_sessions: int(1, 10_000_000)
      .default(10_000)
      .describe(
        "Sessions held in memory at most; past it the least recently used idle session is evicted (store jsonl: read back from its file when used again; store memory: its history is forgotten).",
      ),
    max_bytes: int(MiB, 64 * 1024 * MiB)
      .default(128 * MiB)
      .describe(
        "Bytes of history held in memory at most, all sessions together (UTF-8 bytes of the messages' JSON); past it idle sessions are evicted, least recently used first.",
      ),
  })
  .prefault({});

export const PROVIDERS = ["builtin", "openai", "anthropic"] as const;

/** The two forms of the todo tool (tools.todo.style, AGENT.md todo_style). */
export const TODO_STYLES = ["list", "phases"] as const;

export const modelEntrySchema = z.strictObject({
  model_name: z.string().regex(MODEL_NAME, "expected letters, digits, '.', '_' or '-' (at most 64)"),
  provider: z.enum(PROVIDERS),
  model: z.string().min(1),
  api_base: z.string().min(1).optional().describe("Base URL; requests go to {api_base}/chat/completions or /messages."),
  api_key: z.string().optional().describe("Secret; use ${VAR} to read it from the environment."),
  request_timeout: int(1, 3_600_000)
    .optional()
    .describe(
      "Ms to wait for the server to start answering, and then between two pieces of data of a streamed answer; keep-alive comments and pings do not count (default 120000).",
    ),
  max_duration: int(1, 86_400_000)
    .optional()
    .describe("Ms one call may take in all, however steadily the server sends, retries and their waits included (default 600000)."),
  max_tokens: int(1, 10_000_000).optional(),
  context_window: int(1024, 100_000_000)
    .optional()
    .describe(
      "Tokens the model reads and writes in one call (its context window; default 32768). Each request is fitted to it, leaving max_tokens for the answer: the oldest exchanges are left out first.",
    ),
  temperature: z.number().min(0).max(2).optional(),
  custom_headers: z.record(z.string(), z.string()).optional(),
  extra_body: z.record(z.string(), z.unknown()).optional().describe("Merged last into the request body."),
  stream: z.boolean().optional().describe("Ask the server to stream its answer (default true); false for a server whose streaming is broken."),
  fallbacks: z.array(z.string()).optional().describe("model_names tried in order when this one fails."),
  vision: z
    .boolean()
    .optional()
    .describe(
      "false when the model takes no images: a message with images for it is refused (400) instead of failing at the provider (default true; the built-in model has none).",
    ),
  thinking: z
    .strictObject({
      budget_tokens: int(1024, 10_000_000).describe("Tokens the model may think with; at least 1024 and less than max_tokens."),
    })
    .optional()
    .describe("anthropic: extended thinking; the signed thinking blocks go back with the rest of the turn, as the API requires with tools."),
  cache: z
    .boolean()
    .optional()
    .describe("anthropic: prompt caching; the tool list, the system prompt and the conversation so far are marked cacheable (default false)."),
  max_tokens_field: z
    .enum(["max_tokens", "max_completion_tokens"])
    .optional()
    .describe("openai: the field max_tokens is sent as (default max_completion_tokens for o-series and gpt-5 models, max_tokens for the rest)."),
  reasoning_effort: z
    .enum(["none", "minimal", "low", "medium", "high", "xhigh"])
    .optional()
    .describe("openai: sent as reasoning_effort, for reasoning models that take it."),
});

const toolGate = (enabled: boolean) => z.strictObject({ enabled: z.boolean().default(enabled) }).prefault({});

/** The section of a tool the gateway does not ship (a plugin's, an MCP server's): `tools.<name>`. */
export const pluginToolSchema = z.strictObject({
  enabled: z.boolean().optional().describe("Off with false; a listed plugin's tools are on unless they say otherwise."),
  timeout_ms: int(1, 86_400_000).optional().describe("Time limit of one call in ms (default 60000)."),
});

export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** An MCP server: a command to start (stdio) or a URL to reach (streamable HTTP). */
export const mcpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional().describe("Program that speaks MCP on stdio."),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional().describe("Extra environment for the command."),
    cwd: z.string().optional().describe("Working directory of the command, relative to the config file."),
    url: z.url().optional().describe("An MCP server over streamable HTTP."),
    headers: z.record(z.string(), z.string()).optional(),
    timeout_ms: int(1, 86_400_000).optional().describe("Time limit of one call of its tools in ms (default 60000)."),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({ code: "custom", message: 'give exactly one of "command" (stdio) or "url" (HTTP)' });
    }
    if (server.url !== undefined && (server.args || server.env || server.cwd)) {
      ctx.addIssue({ code: "custom", message: '"args", "env" and "cwd" go with "command", not "url"' });
    }
    if (server.command !== undefined && server.headers) {
      ctx.addIssue({ code: "custom", message: '"headers" go with "url", not "command"' });
    }
  });

/** Keys of `tools` that are not tool sections. */
export const TOOLS_RESERVED = ["plugins", "mcp", "max_result_bytes"] as const;

/** Tools the gateway ships have their sections here; any other `tools.<name>` is a plugin's or an MCP tool's. */
export const toolsSchema = z
  .strictObject({
    plugins: z.array(z.string().min(1)).default([]).describe("Tool modules to load: paths (relative to the config file) or package names."),
    max_result_bytes: int(1024, 64 * 1024 * 1024)
      .optional()
      .describe(
        "The most UTF-8 bytes a tool result keeps (every tool: built-in, plugin, MCP), for the model and the user; the rest is cut with a note saying so (default 65536).",
      ),
    mcp: z
      .strictObject({
        servers: z.record(z.string().regex(MCP_SERVER_NAME, "expected a server name: letters, digits, _ and -, at most 32"), mcpServerSchema).default({}),
        max_message_bytes: int(64 * 1024, 1024 * 1024 * 1024)
          .optional()
          .describe("The most one message from an MCP server may hold (default 8388608); a bigger answer fails that call alone, the server stays connected."),
      })
      .prefault({}),
    todo: z
      .strictObject({
        enabled: z.boolean().default(false),
        max_plans: int(1, 1_000_000).default(256).describe("Non-empty todo plans the gateway keeps at once."),
        style: z
          .enum(TODO_STYLES)
          .default("list")
          .describe('"list": PicoClaw\'s read/write tool; "phases": named phases of tasks changed by ops. AGENT.md todo_style overrides it.'),
      })
      .prefault({}),
    subagent: z
      .strictObject({
        enabled: z.boolean().default(true),
        deliver: z.boolean().default(false).describe("Show the child's final reply to the user too (subagent and delegate)."),
        keep_history: z.boolean().default(false).describe("Keep a finished child's history (readable via the history API)."),
      })
      .prefault({}),
    spawn: toolGate(true),
    delegate: toolGate(true),
  })
  .catchall(pluginToolSchema)
  .prefault({});

/** An origin as browsers send it: `scheme://host[:port]`, http or https, nothing after. */
function isOrigin(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "" && url.pathname === "/" && !/[?#]/.test(text);
}

/** A host name or address, optionally with `:port` (IPv6 in brackets). */
const isHost = (text: string) => /^[^\s/\\?#@]+$/.test(text) && URL.canParse(`http://${text}`);

export const gatewaySchema = z
  .strictObject({
    host: z.string().min(1).default("127.0.0.1"),
    port: int(0, 65535).default(18790).describe("0 picks any free port."),
    token: z.string().default("").describe("When set, /v1/* requires Authorization: Bearer <token>."),
    allowed_origins: z
      .array(z.string().refine(isOrigin, "expected an origin: scheme://host[:port], such as https://app.example.com (no path)"))
      .default([])
      .describe("Web origins whose pages may call the API (they get CORS headers); a request from any other page is refused (403)."),
    allowed_hosts: z
      .array(z.string().refine(isHost, "expected a host name or address, optionally with :port, such as myhost.lan or myhost.lan:18790"))
      .default([])
      .describe("Host headers answered while no token is set, besides localhost, 127.x.y.z and [::1]; without :port any port."),
    limits: z
      .strictObject({
        headers_timeout_ms: int(100, 600_000)
          .default(10_000)
          .describe("Time a client has to send a request's headers, in ms; a connection that has not sent them by then is closed."),
        request_timeout_ms: int(100, 3_600_000)
          .default(30_000)
          .describe("Time a client has to send a whole request (headers and body), in ms. The answer may take longer."),
        keep_alive_timeout_ms: int(100, 600_000).default(5_000).describe("How long an idle connection stays open after an answer, in ms."),
        max_connections: int(1, 1_000_000)
          .default(1_000)
          .describe("Open connections at most; a new one past it closes the longest-idle connection, or is refused when all are busy."),
        stream_queue_bytes: int(65_536, 1_073_741_824)
          .default(8_388_608)
          .describe("Bytes a streamed answer holds that its client has not read yet; past it the stream is cut and its turn aborted."),
      })
      .refine((limits) => limits.headers_timeout_ms <= limits.request_timeout_ms, {
        path: ["headers_timeout_ms"],
        message: "must not be more than request_timeout_ms",
      })
      .prefault({}),
  })
  .prefault({});

export const DEFAULT_MODEL_LIST = [{ model_name: "local", provider: "builtin", model: "scripted" }] as const;

export const configSchema = z
  .strictObject({
    $schema: z.string().optional().describe("Path or URL of the JSON Schema, for editors."),
    gateway: gatewaySchema,
    agents: agentsSchema,
    session: sessionSchema,
    model_list: z.array(modelEntrySchema).default(() => DEFAULT_MODEL_LIST.map((m) => ({ ...m }))),
    tools: toolsSchema,
    channel_list: channelListSchema,
  })
  // Cross-field checks run even when other parts of the config are wrong (one message per
  // problem), so they read the value defensively: any part may still be raw input.
  .superRefine(
    (value, ctx) => {
      const config = value as {
        model_list?: unknown;
        agents?: { defaults?: { model_name?: unknown; max_history_bytes?: unknown } };
        session?: { max_bytes?: unknown };
      };
      const perSession = config.agents?.defaults?.max_history_bytes;
      const allSessions = config.session?.max_bytes;
      if (typeof perSession === "number" && typeof allSessions === "number" && allSessions < perSession) {
        ctx.addIssue({
          code: "custom",
          path: ["session", "max_bytes"],
          message: `must be at least agents.defaults.max_history_bytes (${perSession}): one session must fit`,
        });
      }
      const list = Array.isArray(config.model_list) ? (config.model_list as unknown[]) : [];
      const entries = list.map((entry) => (entry !== null && typeof entry === "object" ? (entry as Record<string, unknown>) : {}));
      const names = new Map<string, number>();
      entries.forEach((entry, i) => {
        const name = entry.model_name;
        if (typeof name !== "string") return;
        if (names.has(name)) {
          ctx.addIssue({
            code: "custom",
            path: ["model_list", i, "model_name"],
            message: `duplicate model_name "${name}" (also model_list[${names.get(name)}])`,
          });
        } else names.set(name, i);
      });
      entries.forEach((entry, i) => {
        const { context_window: window, max_tokens: answer } = entry;
        if (typeof window === "number" && typeof answer === "number" && answer >= window) {
          ctx.addIssue({
            code: "custom",
            path: ["model_list", i, "context_window"],
            message: `must be more than max_tokens (${answer}): the answer is written in the context window too`,
          });
        }
      });
      entries.forEach((entry, i) => {
        if (!Array.isArray(entry.fallbacks)) return;
        entry.fallbacks.forEach((name: unknown, j: number) => {
          if (typeof name === "string" && !names.has(name)) {
            ctx.addIssue({ code: "custom", path: ["model_list", i, "fallbacks", j], message: `unknown model_name "${name}"` });
          }
        });
      });
      const chosen = config.agents?.defaults?.model_name;
      if (typeof chosen === "string" && Array.isArray(config.model_list) && !names.has(chosen)) {
        ctx.addIssue({
          code: "custom",
          path: ["agents", "defaults", "model_name"],
          message: `unknown model_name "${chosen}"; model_list has: ${[...names.keys()].join(", ") || "nothing"}`,
        });
      }
    },
    { when: () => true },
  );

export type Config = z.output<typeof configSchema>;
export type ModelEntry = z.output<typeof modelEntrySchema>;
export type ToolsConfig = Config["tools"];

export type McpServerConfig = z.output<typeof mcpServerSchema>;

/** Names of the shipped tools (their config sections are known). */
export const BUILTIN_TOOL_NAMES = Object.keys(toolsSchema.unwrap().shape)
  .filter((name) => !(TOOLS_RESERVED as readonly string[]).includes(name))
  .sort();
