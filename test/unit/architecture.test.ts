/**
 * The house's layering, as a test. Every file under src/ belongs to a room;
 * a room may import only the rooms its rule allows, and packages that tie
 * code to one place (hono, the file system, the process environment) stay
 * in the rooms that own that place. README's "Architecture" section says
 * the same in words.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "..", "..", "src");

type Room =
  | "shared"
  | "config"
  | "messages"
  | "models"
  | "session"
  | "tools"
  | "agents"
  | "workspace"
  | "port"
  | "runtime"
  | "channels"
  | "features"
  | "builtins"
  | "gateway"
  | "composition"
  | "entry";

/** Which room a file (relative to src/, with /) is in. */
function roomOf(file: string): Room {
  const [top] = file.split("/");
  if (["bytes.ts", "errors.ts", "log.ts", "signals.ts", "validation.ts"].includes(file)) return "shared";
  // page.ts reads the chat page's built files once at start-up and hands them to the gateway as bytes.
  if (
    [
      "bootstrap.ts",
      "house.ts",
      "cli.ts",
      "cli-usage.ts",
      "status-cli.ts",
      "cron-cli.ts",
      "pairing-cli.ts",
      "text-table.ts",
      "main.ts",
      "command.ts",
      "repl.ts",
      "page.ts",
      "onboard.ts",
      "heap-sizing.ts",
      "jit-budget.ts",
      "idle-collect.ts",
      "code-cache.ts",
    ].includes(file)
  )
    return "composition";
  if (["index.ts", "embed.ts", "testing.ts"].includes(file)) return "entry";
  if (file === "models/message.ts") return "messages";
  if (file === "features/index.ts") return "builtins";
  const rooms: Record<string, Room> = {
    config: "config",
    models: "models",
    session: "session",
    tools: "tools",
    agents: "agents",
    workspace: "workspace",
    port: "port",
    runtime: "runtime",
    channels: "channels",
    features: "features",
    gateway: "gateway",
  };
  const room = rooms[top!];
  if (!room) throw new Error(`src/${file} is in no room; give it one in test/unit/architecture.test.ts (and README's architecture table)`);
  return room;
}

/** The feature a file of the features room belongs to (`features/todo/list/tool.ts` → `todo`). */
const featureOf = (file: string) => file.split("/")[1]!;

/** Every room but the composition root and the entry points: what those two may import. */
const BELOW_COMPOSITION: Room[] = [
  "shared",
  "config",
  "messages",
  "models",
  "session",
  "tools",
  "agents",
  "workspace",
  "port",
  "runtime",
  "channels",
  "features",
  "builtins",
  "gateway",
];

/** What each room may import (besides itself), and why: README's sentence, edge by edge. */
const RULES: Record<Room, { may: readonly Room[]; why: string }> = {
  shared: { may: [], why: "errors, the log, signal joining and validation messages serve every room and depend on none" },
  config: { may: ["shared"], why: "the config is read first and knows nothing of what it configures" },
  messages: { may: [], why: "the conversation's message types are the vocabulary everyone shares" },
  models: {
    may: ["shared", "config", "messages"],
    why: "model providers are adapters at the edge: they know their config entry and the messages, nothing of agents, tools or sessions",
  },
  session: { may: ["shared", "config", "messages"], why: "session keys, per-session state and histories are plain data stores below the runtime" },
  tools: { may: ["shared", "session", "messages"], why: "the tool API and its engine know only the ToolContext they give, never the runtime or a feature" },
  agents: { may: ["shared", "config", "tools"], why: "agents are AGENT.md files and the policy that picks their tools" },
  workspace: { may: ["shared"], why: "an agent's workspace is a confined file system that knows nothing but paths and its policy" },
  port: {
    may: ["shared", "config", "messages", "session", "tools", "agents", "workspace"],
    why: "the feature port is the seam features and the runtime agree on; it depends on neither",
  },
  runtime: {
    may: ["shared", "config", "messages", "models", "session", "tools", "agents", "workspace", "port"],
    why: "the runtime names no feature and no HTTP: features plug in through the port, and the gateway drives it from above",
  },
  channels: {
    may: ["shared", "config", "session", "port"],
    why: "the part every chat channel shares reaches the runtime only through the port (handleMessage, subscribe) and names no chat app",
  },
  features: {
    may: ["shared", "config", "messages", "session", "tools", "agents", "workspace", "port", "channels"],
    why: "a feature knows the port and the rooms below it (a chat app also the channels' shared part), never the runtime, the gateway or another feature",
  },
  builtins: { may: ["port", "features"], why: "the list of built-in features names each feature's folder and nothing else" },
  gateway: { may: ["shared", "session", "runtime", "port"], why: "the gateway knows the runtime and the port (feature routes), nothing of features or models" },
  composition: { may: BELOW_COMPOSITION, why: "the composition root wires everything" },
  entry: {
    may: [...BELOW_COMPOSITION, "composition"],
    why: "the public entry points re-export what their audience needs",
  },
};

/** The runtime's own rooms (`runtime/<room>/`; its two top files are `core`), and which of them each may import. */
type RuntimeRoom = "core" | "context" | "turn" | "streams" | "messages" | "assembly" | "approvals" | "pairing";
const RUNTIME_RULES: Record<RuntimeRoom, { may: readonly RuntimeRoom[]; why: string }> = {
  context: { may: [], why: "fitting a model call to its context window knows models and histories, nothing of turns" },
  turn: { may: ["context"], why: "a turn runs the model (each call fitted) and the tools, and knows nothing of messages or streams" },
  streams: { may: [], why: "the outbox and event streams carry what turns deliver without knowing how turns run" },
  messages: { may: ["turn", "streams"], why: "the way a message travels (command or turn, lock, stop switch, deliveries) uses turns and streams" },
  assembly: { may: [], why: "what the features contributed, collected once, knows only the port" },
  approvals: { may: [], why: "the desk where calls and questions wait for a person knows sessions, the tool gate and the port, nothing of turns" },
  pairing: { may: [], why: "the book of chat users the owner let in and of codes waiting knows the feature state and the port, nothing of turns" },
  core: { may: ["context", "turn", "streams", "messages", "assembly", "approvals", "pairing"], why: "the runtime and its options assemble the rooms" },
};

function runtimeRoomOf(file: string): RuntimeRoom {
  const [, second, third] = file.split("/");
  if (third === undefined) return "core";
  if (!(second! in RUNTIME_RULES) || second === "core")
    throw new Error(`src/${file} is in no room of the runtime; give it one in test/unit/architecture.test.ts`);
  return second as RuntimeRoom;
}

/**
 * The only files below the runtime that use the file system: the session folder's
 * files (histories and meta files, appended, rewritten, removed; the journal that
 * makes appends durable, and its replay; features' state files, rewritten whole)
 * and its lock. The JSONL store itself
 * (session/jsonl/jsonl-store.ts, jsonl-state.ts) goes through them.
 */
const SESSION_FOLDER_FILES = [
  "session/jsonl/session-files.ts",
  "session/jsonl/journal.ts",
  "session/jsonl/journal-replay.ts",
  "session/jsonl/state-files.ts",
  "session/jsonl/dir-lock.ts",
];

/** Packages and globals that tie code to one place, and the rooms (or files) allowed to use them. */
const PLACES: { name: string; matches: (specifier: string) => boolean; allowed: (file: string) => boolean; why: string }[] = [
  {
    name: "hono",
    matches: (s) => s === "hono" || s.startsWith("hono/") || s.startsWith("@hono/"),
    allowed: (file) => roomOf(file) === "gateway",
    why: "nothing below the gateway imports hono",
  },
  {
    name: "grammY",
    matches: (s) => s === "grammy" || s.startsWith("grammy/") || s.startsWith("@grammyjs/"),
    allowed: (file) => file.startsWith("features/telegram/"),
    why: "grammY is the Telegram channel's client and stays inside it",
  },
  {
    name: "@discordjs",
    matches: (s) => s.startsWith("@discordjs/") || s === "discord-api-types" || s.startsWith("discord-api-types/"),
    allowed: (file) => file.startsWith("features/discord/"),
    why: "@discordjs is the Discord channel's client and stays inside it",
  },
  {
    name: "pg",
    matches: (s) => s === "pg" || s.startsWith("pg/") || s.startsWith("pg-"),
    allowed: (file) => file.startsWith("session/postgres/"),
    why: "pg is store postgres's driver and stays inside it (loaded only when that store is chosen)",
  },
  {
    name: "the file system",
    matches: (s) => s === "node:fs" || s === "node:fs/promises" || s === "fs",
    allowed: (file) =>
      ["config", "composition"].includes(roomOf(file)) ||
      file === "agents/catalog.ts" ||
      /^features\/(plugins|mcp|exec|skills)\//.test(file) ||
      roomOf(file) === "workspace" ||
      SESSION_FOLDER_FILES.includes(file),
    why:
      "nothing below the runtime reads the file system: config and agents are loaded once and passed in (plugin modules and MCP servers are found at start-up); " +
      "an agent's files go through its workspace (workspace/), the confined file system; " +
      "exec, which starts processes, looks at the paths a command names, the system folders its sandbox shows and /proc for what a command left running; " +
      "skills reads the SKILL.md files of the operator's skill folders ($PICOCLAW_HOME/skills, the built-in ones; a workspace's go through the workspace); " +
      "the one exception is the session folder of store jsonl, whose files only session/jsonl/session-files.ts, its journal (journal.ts, journal-replay.ts) and state-files.ts touch and whose lock only session/jsonl/dir-lock.ts holds",
  },
];

/**
 * Imports that break a rule on purpose, each with its reason. This list may
 * only shrink: the test below pins its length.
 */
const EXCEPTIONS: readonly { from: string; to: string; why: string }[] = [];
const MAX_EXCEPTIONS = 0;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(SRC, full).split(path.sep).join("/")] : [];
  });
}

interface Edge {
  from: string;
  /** A file under src/ (relative), or the package specifier. */
  to: string;
  local: boolean;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(path.join(SRC, file), "utf8");
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => {
    if (!fileName.startsWith(".")) return { from: file, to: fileName, local: false };
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName)).replace(/\.js$/, ".ts");
    return { from: file, to: target, local: true };
  });
}

const files = sourceFiles(SRC);
const edges = files.flatMap(importsOf);
const excepted = (edge: Edge) => EXCEPTIONS.some((e) => e.from === edge.from && e.to === edge.to);

/** The session room's store implementations: a feature reaches histories and state through the host's ports, never through a store. */
const STORE_IMPLEMENTATION = /^session\/(jsonl\/|postgres\/|stores\.ts$|memory-history\.ts$|session-cache\.ts$)/;
const STORE_RULE =
  "a feature reaches histories and its state through the host's capabilities, never a store's implementation (session/jsonl/, session/postgres/, stores.ts, memory-history.ts, session-cache.ts)";

/** Every import between files that breaks a room's rule, as a sentence that names the rule. */
function layerViolations(all: readonly Edge[]): string[] {
  const broken: string[] = [];
  for (const edge of all.filter((e) => e.local && !excepted(e))) {
    const from = roomOf(edge.from);
    const to = roomOf(edge.to);
    if ((from === "features" || from === "channels" || from === "port") && STORE_IMPLEMENTATION.test(edge.to)) {
      broken.push(`src/${edge.from} imports src/${edge.to}: ${STORE_RULE}`);
      continue;
    }
    if (from === to) {
      if (from === "features" && featureOf(edge.from) !== featureOf(edge.to)) broken.push(`src/${edge.from} imports src/${edge.to}: ${RULES.features.why}`);
      if (from === "runtime") {
        const [inner, target] = [runtimeRoomOf(edge.from), runtimeRoomOf(edge.to)];
        if (inner !== target && !RUNTIME_RULES[inner].may.includes(target)) {
          broken.push(`src/${edge.from} imports src/${edge.to}: runtime/${inner} may not import runtime/${target} (${RUNTIME_RULES[inner].why})`);
        }
      }
      continue;
    }
    if (!RULES[from].may.includes(to)) broken.push(`src/${edge.from} imports src/${edge.to}: ${from} may not import ${to} (${RULES[from].why})`);
  }
  return broken;
}

describe("architecture", () => {
  it("every file under src/ is in a room", () => {
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) expect(() => roomOf(file), file).not.toThrow();
  });

  it("every import goes down the layers: a room imports only what its rule allows", () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it("hono stays in the gateway and the file system in the loaders", () => {
    const broken: string[] = [];
    for (const edge of edges.filter((e) => !e.local && !excepted(e))) {
      for (const place of PLACES) {
        if (place.matches(edge.to) && !place.allowed(edge.from)) broken.push(`src/${edge.from} uses ${place.name} ("${edge.to}"): ${place.why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("only the program's entry reads the process environment; everything else gets it injected", () => {
    // `process.env`, `process["env"]`, and taking `env` out of `process` (`const { env } = process`).
    const READS = /\bprocess\s*(\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*(globalThis\.)?process\b/;
    for (const read of ["process.env.HOME", 'process["env"]', "const { env } = process;", "const { env: e } = globalThis.process"])
      expect(READS.test(read), read).toBe(true);
    expect(READS.test("opts.env.HOME")).toBe(false);
    const readers = files.filter((file) => READS.test(readFileSync(path.join(SRC, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")));
    expect(readers).toEqual(["main.ts"]);
  });

  it("there are no import cycles between files", () => {
    const graph = new Map(files.map((file) => [file, edges.filter((e) => e.local && e.from === file).map((e) => e.to)]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(" → "));
        return;
      }
      state.set(file, "open");
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it("the list of exceptions only shrinks, and each one says why", () => {
    expect(EXCEPTIONS.length).toBeLessThanOrEqual(MAX_EXCEPTIONS);
    for (const exception of EXCEPTIONS) expect(exception.why.length, `${exception.from} → ${exception.to}`).toBeGreaterThan(20);
  });

  it("a forbidden import is caught, and the failure names the rule", () => {
    // The checker itself, on imports the rules forbid: a feature reaching into the runtime, a tool
    // holding the event bus, the gateway reading a feature's store, one feature importing another,
    // the channels' shared part naming a chat app, a turn reaching up to the message pipeline.
    const edge = (from: string, to: string): Edge => ({ from, to, local: true });
    expect(
      layerViolations([
        edge("features/todo/command.ts", "runtime/messages/commands.ts"),
        edge("tools/tool.ts", "runtime/runtime.ts"),
        edge("gateway/app.ts", "features/todo/plans.ts"),
        edge("features/subagents/tools.ts", "features/todo/plans.ts"),
        edge("features/todo/list/tool.ts", "features/todo/store.ts"),
        edge("runtime/turn/turn.ts", "tools/tool-set.ts"),
        edge("features/telegram/feature.ts", "runtime/runtime.ts"),
        edge("channels/relay.ts", "features/telegram/api.ts"),
        edge("features/telegram/send.ts", "channels/split.ts"),
        edge("runtime/turn/turn-runner.ts", "runtime/messages/message-pipeline.ts"),
        edge("runtime/messages/message-pipeline.ts", "runtime/turn/turn-runner.ts"),
        edge("features/index.ts", "runtime/runtime.ts"),
        edge("features/todo/store.ts", "session/jsonl/jsonl-store.ts"),
      ]),
    ).toEqual([
      `src/features/todo/command.ts imports src/runtime/messages/commands.ts: features may not import runtime (${RULES.features.why})`,
      `src/tools/tool.ts imports src/runtime/runtime.ts: tools may not import runtime (${RULES.tools.why})`,
      `src/gateway/app.ts imports src/features/todo/plans.ts: gateway may not import features (${RULES.gateway.why})`,
      `src/features/subagents/tools.ts imports src/features/todo/plans.ts: ${RULES.features.why}`,
      `src/features/telegram/feature.ts imports src/runtime/runtime.ts: features may not import runtime (${RULES.features.why})`,
      `src/channels/relay.ts imports src/features/telegram/api.ts: channels may not import features (${RULES.channels.why})`,
      `src/runtime/turn/turn-runner.ts imports src/runtime/messages/message-pipeline.ts: runtime/turn may not import runtime/messages (${RUNTIME_RULES.turn.why})`,
      `src/features/index.ts imports src/runtime/runtime.ts: builtins may not import runtime (${RULES.builtins.why})`,
      `src/features/todo/store.ts imports src/session/jsonl/jsonl-store.ts: ${STORE_RULE}`,
    ]);
  });

  it("a feature's folder is named by the list of built-ins only: a feature is one folder and one line", () => {
    const folders = [...new Set(files.filter((f) => roomOf(f) === "features").map(featureOf))];
    expect(folders.length).toBeGreaterThan(3);
    const list = edges.filter((e) => e.from === "features/index.ts" && e.local).map((e) => featureOf(e.to));
    for (const folder of folders) {
      expect(files, `src/features/${folder}/ has no feature.ts`).toContain(`features/${folder}/feature.ts`);
      expect(list, `src/features/index.ts does not list src/features/${folder}/`).toContain(folder);
    }
    const reaching = edges.filter((e) => e.local && roomOf(e.to) === "features" && roomOf(e.from) !== "features" && e.from !== "features/index.ts");
    expect(reaching.map((e) => `src/${e.from} imports src/${e.to}`)).toEqual([]);
  });

  it("every file of the runtime is in one of its rooms", () => {
    for (const file of files.filter((f) => roomOf(f) === "runtime")) expect(() => runtimeRoomOf(file), file).not.toThrow();
  });
});

describe("README's architecture tables", () => {
  const readme = readFileSync(path.resolve(import.meta.dirname, "..", "..", "README.md"), "utf8").split("\n");
  /** The rows of the table whose header line is `header`, as cells. */
  const rows = (header: string): string[][] => {
    const start = readme.indexOf(header);
    expect(start, `README has no table headed ${header}`).toBeGreaterThan(-1);
    const body: string[][] = [];
    for (const line of readme.slice(start + 2)) {
      if (!line.startsWith("|")) break;
      body.push(
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    }
    return body;
  };
  const mayImport = (cell: string) => (cell === "nothing" ? [] : cell.split(",").map((room) => room.trim())).sort();

  it("the room table names every room, with what its rule lets it import, and files that are in it", () => {
    const table = rows("| room | files | may import | why |");
    expect(table.map(([room]) => room).sort()).toEqual(Object.keys(RULES).sort());
    for (const [room, filesCell, may] of table) {
      expect(mayImport(may!), `README's row of ${room}`).toEqual([...RULES[room as Room].may].sort());
      for (const [, named] of filesCell!.matchAll(/`([^`]+)`/g)) {
        const file = named!.endsWith("/") ? `${named!.replace("<name>", "x")}x.ts` : named!;
        expect(roomOf(file), `README puts ${named} in ${room}`).toBe(room);
      }
    }
  });

  it("the runtime room table says what the runtime's rules say", () => {
    const table = rows("| runtime room | may import | why |");
    expect(table.map(([room]) => room).sort()).toEqual(Object.keys(RUNTIME_RULES).sort());
    for (const [room, may] of table) expect(mayImport(may!), `README's row of runtime/${room}`).toEqual([...RUNTIME_RULES[room as RuntimeRoom].may].sort());
  });
});

describe("the chat page (web/src)", () => {
  const WEB = path.resolve(import.meta.dirname, "..", "..", "web", "src");
  const pageFiles = readdirSync(WEB).filter((name) => name.endsWith(".ts"));

  it("is a client of the HTTP API only: it imports its own files, the SSE parser and the Markdown renderer and sanitiser, nothing of src/", () => {
    const packages = new Set(["eventsource-parser/stream", "marked", "dompurify"]);
    const foreign = pageFiles.flatMap((file) =>
      ts
        .preProcessFile(readFileSync(path.join(WEB, file), "utf8"), true, true)
        .importedFiles.map(({ fileName }) => fileName)
        .filter((name) => !/^\.\/[\w-]+\.js$/.test(name) && !packages.has(name))
        .map((name) => `web/src/${file} imports ${name}`),
    );
    expect(pageFiles.length).toBeGreaterThan(5);
    expect(foreign).toEqual([]);
  });

  it("never parses text as HTML itself: no innerHTML, outerHTML, insertAdjacentHTML or document.write; Markdown's HTML goes through DOMPurify only", () => {
    const sinks = pageFiles.filter((file) =>
      /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createPolicy)\b/.test(readFileSync(path.join(WEB, file), "utf8")),
    );
    expect(sinks).toEqual([]);
    // The one file that has HTML at all hands it to the sanitiser, which returns nodes.
    const html = pageFiles.filter((file) => /from "marked"/.test(readFileSync(path.join(WEB, file), "utf8")));
    expect(html).toEqual(["markdown.ts"]);
    expect(readFileSync(path.join(WEB, "markdown.ts"), "utf8")).toContain("RETURN_DOM_FRAGMENT: true");
  });
});
