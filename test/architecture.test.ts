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

const SRC = path.resolve(import.meta.dirname, "..", "src");

type Room =
  | "shared"
  | "config"
  | "messages"
  | "models"
  | "session"
  | "tools"
  | "agents"
  | "port"
  | "runtime"
  | "features"
  | "channels"
  | "gateway"
  | "composition"
  | "entry";

/** Which room a file (relative to src/, with /) is in. */
function roomOf(file: string): Room {
  const [top, second] = file.split("/");
  if (["bytes.ts", "errors.ts", "log.ts", "signals.ts", "validation.ts"].includes(file)) return "shared";
  // page.ts reads the chat page's built files once at start-up and hands them to the gateway as bytes.
  if (["bootstrap.ts", "cli.ts", "main.ts", "repl.ts", "page.ts"].includes(file)) return "composition";
  if (["index.ts", "embed.ts", "testing.ts"].includes(file)) return "entry";
  if (file === "models/message.ts") return "messages";
  if (top === "tools" && second !== undefined && !second.endsWith(".ts")) return "features";
  const rooms: Record<string, Room> = {
    config: "config",
    models: "models",
    session: "session",
    tools: "tools",
    agents: "agents",
    feature: "port",
    runtime: "runtime",
    channels: "channels",
    gateway: "gateway",
  };
  const room = rooms[top!];
  if (!room) throw new Error(`src/${file} is in no room; give it one in test/architecture.test.ts (and README's architecture table)`);
  return room;
}

/** The feature a file of the features room belongs to (`tools/todo/list/tool.ts` → `todo`). */
const featureOf = (file: string) => file.split("/")[1]!;

/** The chat app a file of the channels room belongs to (`channels/telegram/send.ts` → `telegram`), or null for the part every channel shares (`channels/relay.ts`). */
const channelOf = (file: string) => {
  const parts = file.split("/");
  return parts.length > 2 ? parts[1]! : null;
};

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
  port: {
    may: ["shared", "config", "session", "tools", "agents"],
    why: "the feature port is the seam features and the runtime agree on; it depends on neither",
  },
  runtime: {
    may: ["shared", "config", "messages", "models", "session", "tools", "agents", "port"],
    why: "the runtime names no feature and no HTTP: features plug in through the port, and the gateway drives it from above",
  },
  features: {
    may: ["shared", "config", "messages", "session", "tools", "agents", "port"],
    why: "a feature knows the tool API and the port, never the runtime, the gateway or another feature",
  },
  channels: {
    may: ["shared", "config", "session", "port"],
    why: "a chat channel is a feature: it reaches the runtime only through the port (handleMessage, subscribe), never the runtime, the gateway, a feature or another chat app's channel",
  },
  gateway: { may: ["shared", "session", "runtime", "port"], why: "the gateway knows the runtime and the port (feature routes), nothing of features or models" },
  composition: {
    may: ["shared", "config", "messages", "models", "session", "tools", "agents", "port", "runtime", "features", "channels", "gateway"],
    why: "the composition root wires everything",
  },
  entry: {
    may: ["shared", "config", "messages", "models", "session", "tools", "agents", "port", "runtime", "features", "channels", "gateway", "composition"],
    why: "the public entry points re-export what their audience needs",
  },
};

/**
 * The only files below the runtime that use the file system: the session folder's
 * files (histories and meta files, appended, rewritten, removed) and its lock.
 * The JSONL store itself (session/jsonl-store.ts) goes through them.
 */
const SESSION_FOLDER_FILES = ["session/session-files.ts", "session/dir-lock.ts"];

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
    allowed: (file) => file.startsWith("channels/telegram/"),
    why: "grammY is the Telegram channel's client and stays inside it",
  },
  {
    name: "the file system",
    matches: (s) => s === "node:fs" || s === "node:fs/promises" || s === "fs",
    allowed: (file) =>
      ["config", "composition"].includes(roomOf(file)) ||
      file === "agents/catalog.ts" ||
      /^tools\/(plugins|mcp)\//.test(file) ||
      SESSION_FOLDER_FILES.includes(file),
    why:
      "nothing below the runtime reads the file system: config and agents are loaded once and passed in (plugin modules and MCP servers are found at start-up); " +
      "the one exception is the session folder of store jsonl, whose files only session/session-files.ts touches and whose lock only session/dir-lock.ts holds",
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

/** Every import between files that breaks a room's rule, as a sentence that names the rule. */
function layerViolations(all: readonly Edge[]): string[] {
  const broken: string[] = [];
  for (const edge of all.filter((e) => e.local && !excepted(e))) {
    const from = roomOf(edge.from);
    const to = roomOf(edge.to);
    if (from === to) {
      if (from === "features" && featureOf(edge.from) !== featureOf(edge.to)) broken.push(`src/${edge.from} imports src/${edge.to}: ${RULES.features.why}`);
      // A chat app's channel uses the shared part; the shared part names no chat app, and no app uses another's.
      if (from === "channels" && channelOf(edge.to) !== null && channelOf(edge.from) !== channelOf(edge.to)) {
        broken.push(`src/${edge.from} imports src/${edge.to}: ${RULES.channels.why}`);
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
    const readers = files.filter((file) => /\bprocess\.env\b/.test(readFileSync(path.join(SRC, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")));
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
    // The checker itself, on imports the old layout had: a feature reaching into the runtime, a tool
    // holding the event bus, the gateway reading a feature's store, one feature importing another.
    const edge = (from: string, to: string): Edge => ({ from, to, local: true });
    expect(
      layerViolations([
        edge("tools/todo/command.ts", "runtime/commands.ts"),
        edge("tools/tool.ts", "runtime/runtime.ts"),
        edge("gateway/app.ts", "tools/todo/plans.ts"),
        edge("tools/subagent/tools.ts", "tools/todo/plans.ts"),
        edge("tools/todo/list/tool.ts", "tools/todo/store.ts"),
        edge("runtime/turn.ts", "tools/tool-set.ts"),
        edge("channels/telegram/feature.ts", "runtime/runtime.ts"),
        edge("channels/relay.ts", "channels/telegram/api.ts"),
        edge("channels/telegram/send.ts", "channels/split.ts"),
      ]),
    ).toEqual([
      `src/tools/todo/command.ts imports src/runtime/commands.ts: features may not import runtime (${RULES.features.why})`,
      `src/tools/tool.ts imports src/runtime/runtime.ts: tools may not import runtime (${RULES.tools.why})`,
      `src/gateway/app.ts imports src/tools/todo/plans.ts: gateway may not import features (${RULES.gateway.why})`,
      `src/tools/subagent/tools.ts imports src/tools/todo/plans.ts: ${RULES.features.why}`,
      `src/channels/telegram/feature.ts imports src/runtime/runtime.ts: channels may not import runtime (${RULES.channels.why})`,
      `src/channels/relay.ts imports src/channels/telegram/api.ts: ${RULES.channels.why}`,
    ]);
  });
});

describe("the chat page (web/src)", () => {
  const WEB = path.resolve(import.meta.dirname, "..", "web", "src");
  const pageFiles = readdirSync(WEB).filter((name) => name.endsWith(".ts"));

  it("is a client of the HTTP API only: it imports its own files and the SSE parser, nothing of src/", () => {
    const foreign = pageFiles.flatMap((file) =>
      ts
        .preProcessFile(readFileSync(path.join(WEB, file), "utf8"), true, true)
        .importedFiles.map(({ fileName }) => fileName)
        .filter((name) => !/^\.\/[\w-]+\.js$/.test(name) && name !== "eventsource-parser/stream")
        .map((name) => `web/src/${file} imports ${name}`),
    );
    expect(pageFiles.length).toBeGreaterThan(5);
    expect(foreign).toEqual([]);
  });

  it("never parses text as HTML: no innerHTML, outerHTML, insertAdjacentHTML or document.write", () => {
    const sinks = pageFiles.filter((file) => /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write)\b/.test(readFileSync(path.join(WEB, file), "utf8")));
    expect(sinks).toEqual([]);
  });
});
