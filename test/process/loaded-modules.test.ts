/**
 * A gateway loads only what its config uses: the MCP client (and its SDK),
 * ajv, the plugin loader, grammY and the Anthropic adapter are imported when
 * something configured needs them, and an HTTP model's answer reader (its
 * wire schemas) with its first answer. Proven on the real process: a module loaded with `--import` records
 * every module the gateway loads (ES modules through a loader hook, CommonJS
 * ones from the require cache, Node's built-ins from process.moduleLoadList) and prints the list on SIGUSR2. dist/ is
 * bundled (scripts/build.mjs), but each source loaded with `import()` is a
 * file of its own there, at its path in src/.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");

const HOOKS = `data:text/javascript,${encodeURIComponent(
  "let port; export function initialize(data) { port = data.port; } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }",
)}`;

const RECORDER = `data:text/javascript,${encodeURIComponent(`
import { createRequire, register } from "node:module";
const urls = [];
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => urls.push(url));
port1.unref();
register(${JSON.stringify(HOOKS)}, { data: { port: port2 }, transferList: [port2] });
process.on("SIGUSR2", () => process.stderr.write("LOADED " + JSON.stringify([...urls, ...Object.keys(createRequire(process.execPath).cache), ...process.moduleLoadList]) + "\\n"));
`)}`;

interface Gateway {
  url: string;
  /** Every module the process has loaded so far (file URLs and paths). */
  loaded(): Promise<string[]>;
  stop(): Promise<void>;
}

async function startGateway(config: unknown, files: Record<string, string> = {}): Promise<Gateway> {
  const project = writeProject({ config, files });
  const child: ChildProcess = spawn(process.execPath, ["--import", RECORDER, path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
  const url = await within('the gateway\'s "listening on" line', listening, { instead: () => `its output so far:\n${output}` });
  return {
    url,
    loaded: async () => {
      const from = output.length;
      child.kill("SIGUSR2");
      const printed = () => /LOADED (.*)\n/.exec(output.slice(from));
      await waitFor("the gateway's LOADED line after SIGUSR2", () => printed() !== null, { instead: () => `its output since:\n${output.slice(from)}` });
      return JSON.parse(printed()![1]!) as string[];
    },
    stop: async () => {
      child.kill("SIGTERM");
      await within("the gateway to exit on SIGTERM", exited);
    },
  };
}

const loads = (modules: string[], part: string) => modules.some((m) => m.includes(part));

describe("what a gateway loads", () => {
  it("a default config with an OpenAI-compatible model loads neither the MCP SDK, ajv, grammY, @discordjs, pg, the plugin loader nor the Anthropic answer reader nor OpenTelemetry, nor Node's fetch classes, http2, prom-client or TLS; the OpenAI answer reader comes with the first answer", {
    timeout: 60_000,
  }, async () => {
    const model = await FakeModelServer.start(() => textCompletion("hello back"));
    const gateway = await startGateway(openaiConfig(model.url));
    try {
      const atStart = await gateway.loaded();
      expect(loads(atStart, "/dist/main.js")).toBe(true);
      expect(loads(atStart, "/dist/models/openai-decode.js")).toBe(false);
      // TLS neither, until an https model is called (or a scrape loads prom-client, whose push client needs it).
      for (const part of ["NativeModule internal/deps/undici/undici", "NativeModule http2", "NativeModule https", "NativeModule tls"])
        expect(loads(atStart, part), part).toBe(false);

      const res = await fetch(`${gateway.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "hi" }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reply: string }).reply).toBe("hello back");

      const afterTurn = await gateway.loaded();
      expect(loads(afterTurn, "/dist/models/openai-decode.js")).toBe(true);
      for (const part of [
        "@modelcontextprotocol/sdk",
        "/node_modules/ajv/",
        "/node_modules/grammy/",
        "/dist/features/plugins/load.js",
        "/dist/models/anthropic-decode.js",
        "/dist/features/mcp/",
        "/dist/features/telegram/bot.js",
        "/dist/features/discord/bot.js",
        "/node_modules/@discordjs/",
        "/dist/features/web/html.js",
        "/dist/features/memory/memory-index.js",
        "/node_modules/minisearch/",
        "/node_modules/pg/",
        "/node_modules/pg-protocol/",
        // zod's messages in other languages than English (bundled, English only; the rest come with z.locales' first call).
        "/node_modules/zod/",
        // (@opentelemetry/api itself comes with prom-client, which reads the active span for exemplars.)
        "/node_modules/@opentelemetry/sdk-trace-base/",
        "/node_modules/@opentelemetry/exporter-trace-otlp-http/",
        "/node_modules/@opentelemetry/resources/",
        "/dist/gateway/tracing.js",
        "/dist/gateway/tracing-sdk.js",
        // Node's fetch classes (its built-in undici: ~10 MiB and ~17 ms to load): hono runs on the gateway's own.
        "NativeModule internal/deps/undici/undici",
        // @hono/node-server's, which the gateway does not use.
        "NativeModule http2",
        // prom-client (Node's own metrics) waits for the first scrape; the turn is counted without it. TLS with it.
        "/dist/gateway/metrics-registry.js",
        "NativeModule https",
        "NativeModule tls",
      ]) {
        expect(loads(afterTurn, part), part).toBe(false);
      }
    } finally {
      await gateway.stop();
      await model.close();
    }
  });

  it("zod's other languages than English are not in the bundle: picoclaw-ts's z.locales.fr() loads zod's own messages on its first call, and z.config takes them", () => {
    const script = [
      `import { createRequire } from "node:module";`,
      `const { z } = await import(${JSON.stringify(path.join(root, "dist", "index.js"))});`,
      "const cached = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/zod/v4/locales/')).length;",
      "const message = () => z.string().safeParse(1).error.issues[0].message;",
      "const before = [Object.keys(z.locales).length, cached(), message()];",
      "z.config(z.locales.fr());",
      "const french = [cached() > 0, message()];",
      "z.config(z.locales.en());",
      "console.log(JSON.stringify([...before, ...french, message()]));",
    ].join("\n");
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    expect(run.stderr).toBe("");
    const [languages, loadedBefore, english, loadedAfter, french, englishAgain] = JSON.parse(run.stdout) as [number, number, string, boolean, string, string];
    expect(languages).toBeGreaterThan(40);
    expect(loadedBefore).toBe(0);
    expect(english).toBe("Invalid input: expected string, received number");
    expect(loadedAfter).toBe(true);
    expect(french).toMatch(/^Entrée invalide/);
    expect(englishAgain).toBe(english);
    const bundled = readdirSync(path.join(root, "dist"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"));
    expect(bundled.filter((file) => readFileSync(path.join(root, "dist", file), "utf8").includes("Entrée invalide"))).toEqual([]);
  });

  it("OpenTelemetry's SDK and exporter are loaded at start-up when telemetry.otlp.endpoint is set, and only then", { timeout: 60_000 }, async () => {
    const gateway = await startGateway({ telemetry: { otlp: { endpoint: "http://127.0.0.1:9/v1/traces" } } });
    try {
      const atStart = await gateway.loaded();
      for (const part of ["/node_modules/@opentelemetry/sdk-trace-base/", "/node_modules/@opentelemetry/exporter-trace-otlp-http/", "/dist/gateway/tracing.js"])
        expect(loads(atStart, part), part).toBe(true);
    } finally {
      await gateway.stop();
    }
  });

  it("prom-client (the metrics registry) is not loaded at start-up; the first scrape of /metrics loads it", { timeout: 60_000 }, async () => {
    const gateway = await startGateway({});
    try {
      expect(loads(await gateway.loaded(), "/dist/gateway/metrics-registry.js")).toBe(false);
      expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
      expect(loads(await gateway.loaded(), "/dist/gateway/metrics-registry.js")).toBe(false);
      const res = await fetch(`${gateway.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("# TYPE picoclaw_turns_total counter");
      expect(loads(await gateway.loaded(), "/dist/gateway/metrics-registry.js")).toBe(true);
    } finally {
      await gateway.stop();
    }
  });

  it("a plugin with a plain JSON Schema tool brings the plugin loader and ajv (CommonJS, seen through the require cache), and still not the MCP SDK", {
    timeout: 60_000,
  }, async () => {
    const plugin = [
      "export const tools = [",
      '  { name: "weather", description: "Plain JSON Schema.", parameters: { type: "object", properties: { city: { type: "string" } } }, execute: () => "clear" },',
      "];",
      "",
    ].join("\n");
    const model = await FakeModelServer.start(() => textCompletion("hello back"));
    const gateway = await startGateway({ ...openaiConfig(model.url), tools: { plugins: ["./weather.mjs"] } }, { "weather.mjs": plugin });
    try {
      const atStart = await gateway.loaded();
      expect(loads(atStart, "/dist/features/plugins/load.js")).toBe(true);
      expect(loads(atStart, "/node_modules/ajv/dist/")).toBe(true);
      expect(loads(atStart, "@modelcontextprotocol/sdk")).toBe(false);
    } finally {
      await gateway.stop();
      await model.close();
    }
  });
});
