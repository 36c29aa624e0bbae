import { z } from "zod";
import { type ChannelEntry, channelListSchema } from "./channel-schema.js";
import { AGENT_ID, MODEL_NAME } from "./names.js";
import { telemetrySchema } from "./telemetry-schema.js";

/**
 * The core of `picoclaw.config.json` (README, "Configuration"): the gateway,
 * agents, sessions, model_list and the tools section's own keys. Every
 * object is strict: an unknown key is an error that names its JSON path.
 *
 * What features and adapters configure is theirs: each declares its
 * sections with their schemas and defaults (a feature's `config`, a
 * provider's options, a channel's entry, a store's options), and
 * `ConfigLayout` (layout.ts) mounts them at the extension points below.
 * `config/picoclaw.schema.json` is generated from the composed schema.
 */

export { AGENT_ID, MODEL_NAME } from "./names.js";

const int = (min: number, max: number) => z.int().min(min).max(max);
const KiB = 1024;
const MiB = 1024 * KiB;

/** Schemas mounted into the core at one of its extension points, by key. */
export type Shape = Readonly<Record<string, z.ZodType>>;

/** `agents`; `defaults` takes features' keys (`agents.defaults.subturn`). */
export const agentsSchema = (defaultsExtra: Shape = {}) =>
  z
    .strictObject({
      dir: z.string().min(1).default("agents").describe("Folder of agents/<id>/AGENT.md, relative to the config file."),
      default: z.string().regex(AGENT_ID, "expected an agent id").default("main").describe("Agent used when a request names none."),
      defaults: z
        .strictObject({
          model_name: z.string().min(1).default("local").describe("A model_name from model_list."),
          max_tool_iterations: int(1, 1000).default(20).describe("Model round trips per turn before the turn stops."),
          max_turn_output_bytes: int(4 * KiB, 64 * MiB)
            .default(4 * MiB)
            .describe(
              "Bytes of tool output one turn shows the user at most (UTF-8, all its tools' non-silent results together, and at most 500 of them); past it the rest is not shown, and the user is told once how much was left out. The model still gets every result.",
            ),
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
          workspace: z
            .string()
            .min(1)
            .default("workspace")
            .describe(
              "Each agent's workspace folder (relative to the config file; ~ is the home folder), made at start when missing. AGENT.md workspace: overrides it.",
            ),
          restrict_to_workspace: z
            .boolean()
            .default(true)
            .describe("File tools read and write only inside the workspace (and what tools.allow_read_paths / allow_write_paths name)."),
          allow_read_outside_workspace: z.boolean().default(false).describe("With restrict_to_workspace: file tools may read anywhere; writes stay confined."),
          ...defaultsExtra,
        })
        .prefault({}),
    })
    .prefault({});

/** A session store as the config names it (`session.store`): its type, and what it does, for the schema's description. */
export interface StoreChoice {
  readonly type: string;
  readonly description: string;
}

/**
 * Sessions held in memory when `session.max_sessions` is not set (the
 * loaded config says it, filled in from the store). A store that keeps
 * them elsewhere (a file, a table) reads an evicted one back when it is
 * used again, so it keeps only the sessions used lately: each costs about
 * a kilobyte of heap, and ten thousand of them were most of what a busy
 * gateway's memory grew by. The memory store forgets what it evicts, so
 * it keeps more.
 */
export const DEFAULT_MAX_SESSIONS = { kept: 1_000, memory: 10_000 } as const;

export const defaultMaxSessions = (store: string): number => (store === "memory" ? DEFAULT_MAX_SESSIONS.memory : DEFAULT_MAX_SESSIONS.kept);

/** `session`: where histories are kept (one of the registered stores), how many sessions (and how much of their history) the gateway holds in memory and on disk. */
export const sessionSchema = (stores: readonly StoreChoice[], extra: Shape = {}) =>
  z
    .strictObject({
      store: z
        .enum(stores.map((store) => store.type) as [string, ...string[]])
        .default("jsonl")
        .describe(stores.map((store) => `"${store.type}": ${store.description}`).join("; ")),
      dir: z
        .string()
        .min(1)
        .default("sessions")
        .describe("Folder of the session files (store jsonl), relative to the config file. One gateway process owns it at a time."),
      max_disk_reads: int(1, 256)
        .default(4)
        .describe(
          "Reads of sessions not in memory (store jsonl: a history page of an evicted session) running at once at most; more wait their turn, so many readers cannot take the gateway's memory or its other requests' time.",
        ),
      max_stored: int(1, 10_000_000)
        .default(100_000)
        .describe("Sessions kept on disk at most (store jsonl); past it the session changed least recently is removed, with a log line."),
      max_stored_bytes: int(64 * KiB, 1024 * 1024 * MiB)
        .default(2048 * MiB)
        .describe(
          "Bytes the session folder's histories hold at most, all sessions together (store jsonl: the JSONL files' sizes); past it the sessions changed least recently are removed, with a log line each.",
        ),
      max_sessions: int(1, 10_000_000)
        .optional()
        .describe(
          "Sessions held in memory at most; past it the least recently used idle session is evicted (store jsonl or postgres: read back when used again; store memory: its history is forgotten). Default 1000 with jsonl or postgres, 10000 with memory.",
        ),
      max_bytes: int(MiB, 64 * 1024 * MiB)
        .default(128 * MiB)
        .describe(
          "Bytes of history held in memory at most, all sessions together (UTF-8 bytes of the messages' JSON); past it idle sessions are evicted, least recently used first.",
        ),
      request_memo_bytes: int(0, 1024 * MiB)
        .default(8 * MiB)
        .describe(
          "Bytes of model requests kept at most, all sessions together: each conversation's last request body (when its messages are over 8 KiB), so its next turn copies the history's JSON from it and serializes only its new messages. 0 keeps none (every turn serializes its history once).",
        ),
      state_max_keys: int(1, 1_000_000)
        .default(10_000)
        .describe("Entries a feature's durable state (cron jobs, approvals) holds at most; past it a new one is refused and nothing changes."),
      state_max_bytes: int(64 * 1024, 64 * MiB)
        .default(4 * MiB)
        .describe(
          "Bytes a feature's durable state holds at most (UTF-8 bytes of its entries' JSON); a change past it is refused. With store jsonl each feature's state is a file of session.dir/state/, rewritten whole on each change.",
        ),
      ...extra,
    })
    .prefault({});

/**
 * A model provider as the config knows it: its `provider` name and the
 * entry keys only it takes. Each option names what to use instead on a
 * provider that does not take it (`otherwise`), for the message a used
 * entry gets when it carries an option of another provider.
 */
export interface ProviderChoice {
  readonly type: string;
  readonly options?: Readonly<Record<string, { readonly schema: z.ZodType; readonly otherwise: string }>>;
}

const modelName = z.string().regex(MODEL_NAME, "expected letters, digits, '.', '_' or '-' (at most 64)");

/** What every model entry has, whatever its provider (after `model_name` and `provider`). */
const modelEntryShape = {
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
};

/**
 * A `model_list` entry: the common keys, `provider` (one of the registered
 * providers) and every provider's own options. An option of another
 * provider is allowed by the schema and refused when the entry is used
 * (models/entry-check.ts), so an entry nobody uses may stay as it is.
 */
export const modelEntrySchema = (providers: readonly ProviderChoice[]) =>
  z.strictObject({
    model_name: modelName,
    provider: z.enum(providers.map((p) => p.type) as [string, ...string[]]),
    ...modelEntryShape,
    ...Object.assign({}, ...providers.map((p) => Object.fromEntries(Object.entries(p.options ?? {}).map(([key, option]) => [key, option.schema.optional()])))),
  });

/** What every model entry has: the schema's static type (a provider reads its own options with its own type). */
const baseEntrySchema = z.strictObject({ model_name: modelName, provider: z.string(), ...modelEntryShape });

/** A tool's approval policy (`tools.<key>.approval`, AGENT.md `approval:`): run it, ask a person first, or hide it. */
export const APPROVAL_POLICIES = ["allow", "ask", "deny"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];
export const approvalPolicy = z.enum(APPROVAL_POLICIES);

/** The key every tool's section has besides its own: mounted on each by the config layout. */
export const toolApprovalKey = approvalPolicy
  .optional()
  .describe(
    '"ask": a person allows or denies each call first (chat page, Telegram, the REPL, the API); "deny": the tool is hidden from every agent. Default: the tool\'s own ("allow"; exec: "ask").',
  );

/** A tool's section with nothing but its switch: `tools.<key>.enabled`, on or off by default. */
export const toolGate = (enabled: boolean) => z.strictObject({ enabled: z.boolean().default(enabled) }).prefault({});

/** The section of a tool the gateway does not ship (a plugin's, an MCP server's): `tools.<name>`. */
export const pluginToolSchema = z.strictObject({
  enabled: z.boolean().optional().describe("Off with false; a listed plugin's tools are on unless they say otherwise."),
  timeout_ms: int(1, 86_400_000).optional().describe("Time limit of one call in ms (default 60000)."),
  approval: toolApprovalKey,
});

/** A list of regular expressions (PicoClaw's allow and deny lists), each one checked to compile; null (PicoClaw's none) is an empty list. */
export const patternList = z
  .array(
    z.string().refine((source) => {
      try {
        new RegExp(source);
        return true;
      } catch {
        return false;
      }
    }, "not a valid regular expression"),
  )
  .max(1000)
  // PicoClaw's config writes null for none.
  .nullable()
  .default([])
  .transform((list) => list ?? []);

/**
 * `tools`: its own keys (`max_result_bytes`, the allow lists), the sections the
 * features mount here (each tool's `tools.<key>`, and others such as
 * `tools.mcp`), and any other `tools.<name>` as the section of a tool the
 * gateway does not ship (a plugin's, an MCP server's).
 */
export const toolsSchema = (extra: Shape = {}) =>
  z
    .strictObject({
      max_result_bytes: int(1024, 64 * 1024 * 1024)
        .optional()
        .describe(
          "The most UTF-8 bytes a tool result keeps (every tool: built-in, plugin, MCP), for the model and the user; the rest is cut with a note saying so (default 65536).",
        ),
      allow_read_paths: patternList.describe(
        "Regular expressions of absolute paths file tools may read outside the workspace; ^/literal/folder also allows what is inside it.",
      ),
      allow_write_paths: patternList.describe("Regular expressions of absolute paths file tools may write outside the workspace."),
      approval_timeout_ms: int(1000, 86_400_000)
        .default(300_000)
        .describe('How long a call under approval "ask" (and an ask_user question) waits for a person, in ms; unanswered, it is denied.'),
      ...extra,
    })
    .catchall(pluginToolSchema)
    .prefault({});

/** The keys of `tools` the core owns (they are no tool's section). */
export const CORE_TOOLS_KEYS = ["max_result_bytes", "allow_read_paths", "allow_write_paths", "approval_timeout_ms"] as const;

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
        send_timeout_ms: int(100, 3_600_000)
          .default(30_000)
          .describe(
            "Time an answer's bytes may wait for their client to take them (a large history page or reply it does not read): a connection whose writes have not moved for this long is closed, and such a connection is the first closed when room is needed. A connection that is only silent (a turn waiting for its model) is left alone.",
          ),
        max_connections: int(1, 1_000_000)
          .default(1_000)
          .describe("Open connections at most; a new one past it closes the longest-idle connection, or is refused when all are busy."),
        max_streams: int(1, 1_000_000)
          .default(500)
          .describe(
            "Session event streams (GET /v1/sessions/<key>/events) open at once at most; one more is 503 too_many_streams. Keep it below max_connections, so streams can never take every connection (/health and every other request keep room).",
          ),
        max_queued_turns: int(1, 100_000)
          .default(32)
          .describe(
            "Turns waiting for one session's running turn at most (every channel's messages); one more is refused at once with 429 too_many_queued_turns. A waiting turn whose client goes away leaves the queue unrun.",
          ),
        max_queued_bytes: int(65_536, 1_073_741_824)
          .default(4_194_304)
          .describe(
            "Bytes of input (texts, images, tool results) the turns waiting for one session hold at most, all together; a turn past it is refused at once with 429 too_many_queued_turns.",
          ),
        young_generation_mib: int(0, 64)
          .default(8)
          .describe(
            "The most the gateway process's V8 young generation (its two semi-spaces together) grows to, in MiB: V8 grows it to 32 MiB under load and keeps the pages. 0: V8's own sizing. Start-up, left to V8 for speed, grows it to 8 MiB (16 on a busy machine) before the config is read; from then on it grows no further than this.",
          ),
        heap_growing_percent: int(0, 1000)
          .default(50)
          .describe(
            "How far the gateway process's V8 old generation grows past what its last full collection kept before the next one, in percent (V8's own choice is up to 300). 0: V8's own.",
          ),
        idle_collect_ms: int(0, 3_600_000)
          .default(10_000)
          .describe(
            "After this many ms without a turn, the gateway runs one full garbage collection if its V8 old generation grew by 8 MiB or more since the last one, and the memory a load left goes back to the system (V8 keeps its high-water mark otherwise). Not sooner: the collection also drops optimized code the next few hundred turns compile again. 0: never.",
          ),
        young_release_ms: int(0, 3_600_000)
          .default(250)
          .describe(
            "After this many ms without a turn, the gateway gives back its V8 young generation (up to young_generation_mib of pages a load grew) by running scavenges 25 ms apart until V8 shrinks it (about 13 of them); V8 alone waits 8-10 s. Scavenges drop no optimized code; a load that comes back grows it again. 0: never.",
          ),
        drop_start_code: z
          .boolean()
          .default(true)
          .describe(
            "Once the gateway has started (listening, and what its first turn needs made), it drops the compiled code only start-up ran (reading the config, assembling the runtime) and compacts its heap, once, unless a turn has begun: ~4 MiB less while idle, and less under load. The first turn compiles again what it runs (a few ms). false: V8 drops such code by itself over its next several full collections.",
          ),
        jit_busy_turns: int(0, 1_000_000)
          .default(10)
          .describe(
            "V8's optimizing compiler (TurboFan), held off since the process began, comes on once the gateway has begun this many turns within jit_busy_ms: a load does that in its first second. A gateway that answers a turn now and then runs its code in V8's interpreter and baseline tiers, ~1 ms more CPU a turn, and holds several MiB less (the compiler's code and memory). 0: on as soon as the gateway has started; 1: at its first turn.",
          ),
        jit_busy_ms: int(1, 3_600_000).default(10_000).describe("The time within which jit_busy_turns turns make the gateway busy (see there)."),
        jit_interrupt_budget: int(0, 1_048_576)
          .default(512)
          .describe(
            "Bytes of bytecode a function of the gateway runs between two of V8's looks at whether to optimize it (V8's --interrupt-budget, set at the gateway's first turn; 67584 on Node 20): small, so the few hundred functions a turn runs once or twice each are optimized within tens of turns, not thousands. 0: V8's own.",
          ),
        stream_queue_bytes: int(65_536, 1_073_741_824)
          .default(8_388_608)
          .describe("Bytes a streamed answer holds that its client has not read yet; past it the stream is cut and its turn aborted."),
        idempotency_keys: int(0, 1_000_000)
          .default(1_000)
          .describe("Idempotency-Key answers of the OpenAI-compatible routes kept (10 minutes each) at most; the oldest go first. 0 keeps none."),
        idempotency_bytes: int(0, 1_073_741_824).default(16_777_216).describe("Bytes of those answers kept at most, all together; the oldest go first."),
        responses_kept: int(0, 1_000_000)
          .default(1_000)
          .describe("Responses of the Responses API kept (a day each) for previous_response_id and GET /v1/responses/<id>; the oldest go first. 0 keeps none."),
        responses_bytes: int(0, 1_073_741_824)
          .default(33_554_432)
          .describe("Bytes of kept responses (with their conversations) at most, all together; the oldest go first."),
      })
      .refine((limits) => limits.headers_timeout_ms <= limits.request_timeout_ms, {
        path: ["headers_timeout_ms"],
        message: "must not be more than request_timeout_ms",
      })
      .prefault({}),
  })
  .prefault({});

export const DEFAULT_MODEL_LIST = [{ model_name: "local", provider: "builtin", model: "scripted" }] as const;

/** What the core's extension points hold: the registered stores, providers and channel types, and the sections mounted at each place. */
export interface CoreExtensions {
  stores: readonly StoreChoice[];
  providers: readonly ProviderChoice[];
  /** Each registered channel type's entry schema (`channel_list[]`, told apart by `type`). */
  channels: readonly z.ZodObject[];
  /** Sections at the top of the file (`heartbeat`). */
  top?: Shape;
  /** `tools.<key>` (a tool's section, or another section a feature keeps there). */
  tools?: Shape;
  /** `agents.defaults.<key>`. */
  agentDefaults?: Shape;
  /** `session.<key>` (a store's own options). */
  session?: Shape;
}

/** The whole config's schema: the core with every extension mounted (ConfigLayout composes it). */
export const configSchema = (ext: CoreExtensions) =>
  z
    .strictObject({
      $schema: z.string().optional().describe("Path or URL of the JSON Schema, for editors."),
      gateway: gatewaySchema,
      agents: agentsSchema(ext.agentDefaults),
      session: sessionSchema(ext.stores, ext.session),
      model_list: z.array(modelEntrySchema(ext.providers)).default(() => DEFAULT_MODEL_LIST.map((m) => ({ ...m }))),
      tools: toolsSchema(ext.tools),
      channel_list: channelListSchema(ext.channels),
      telemetry: telemetrySchema,
      ...ext.top,
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

/**
 * The core's part of a loaded config, as its static type. The value holds
 * the features' sections too; each feature reads its own with its own
 * schema's type (a provider its options, a channel its entry).
 */
export type Config = Omit<z.output<ReturnType<typeof configSchema>>, "model_list" | "channel_list"> & {
  model_list: ModelEntry[];
  channel_list: ChannelEntry[];
};
/** A model entry's common keys; a provider reads its own options with its own type. */
export type ModelEntry = z.output<typeof baseEntrySchema>;
export type ToolsConfig = Config["tools"];
