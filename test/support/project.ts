import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { onTestFinished } from "vitest";
import { type Bootstrapped, bootstrap, prepare } from "../../src/bootstrap.js";
import { configFileOf } from "../../src/config/config-file.js";
import type { LoadedConfig } from "../../src/config/load.js";
import { type Extensions, loadConfig } from "../../src/house.js";
import { createApp } from "../../src/gateway/app.js";
import { ConfigError } from "../../src/errors.js";
import type { Logger } from "../../src/log.js";
import type { ModelCatalogOptions } from "../../src/models/catalog.js";
import type { Runtime } from "../../src/runtime/runtime.js";
import type { Clock, Feature } from "../../src/port/feature.js";
import type { Timer } from "../../src/signals.js";
import type { AnyTool } from "../../src/tools/registry.js";
import type { SharedPlanStore } from "../../src/features/todo/plans.js";
import { todoFeature } from "../../src/features/todo/feature.js";

/**
 * A temporary folder removed when the current test ends. `inRepo` puts it
 * under test/, where `picoclaw-ts` and `zod` resolve (for plugin modules).
 */
export function tempDir(prefix = "picoclaw-", inRepo = false): string {
  const dir = mkdtempSync(path.join(inRepo ? path.resolve(import.meta.dirname, "..") : tmpdir(), inRepo ? ".tmp-" : prefix));
  // Retried: a store a failed start-up let go of closes in the background (its journal segment, its lock), and a file
  // made or removed meanwhile makes one pass end in ENOTEMPTY (seen with another suite running beside). rmSync's own
  // retries wait without giving that work a turn of the event loop, so each retry here waits on a real timer (not a
  // test's fake one), for up to 5 s.
  onTestFinished(async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        rmSync(dir, { recursive: true, force: true });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOTEMPTY" || attempt === 100) throw error;
        await sleep(50);
      }
    }
  });
  return dir;
}

export const DEFAULT_AGENT = "---\nname: Main\ndescription: test agent\n---\nYou are a test agent.";

export interface ProjectFiles {
  /** Written as picoclaw.config.json (omit for none). */
  config?: unknown;
  /** id → AGENT.md text. Default: one agent `main`. */
  agents?: Record<string, string>;
  /** name → text, other files (such as .env). */
  files?: Record<string, string>;
}

/** A project folder on disk: config, agents, extra files. */
export function writeProject(files: ProjectFiles, dir = tempDir()): string {
  if (files.config !== undefined) {
    writeFileSync(path.join(dir, "picoclaw.config.json"), typeof files.config === "string" ? files.config : JSON.stringify(files.config, null, 2));
  }
  for (const [id, text] of Object.entries(files.agents ?? { main: DEFAULT_AGENT })) {
    mkdirSync(path.join(dir, "agents", id), { recursive: true });
    writeFileSync(path.join(dir, "agents", id, "AGENT.md"), text);
  }
  for (const [name, text] of Object.entries(files.files ?? {})) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

export interface RecordingLogger extends Logger {
  lines: { level: string; message: string }[];
}

export function recordingLogger(): RecordingLogger {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    info: (message) => lines.push({ level: "info", message }),
    warn: (message) => lines.push({ level: "warn", message }),
    error: (message) => lines.push({ level: "error", message }),
  };
}

export interface Harness {
  dir: string;
  loaded: LoadedConfig;
  runtime: Runtime;
  /** The todo feature's plan store (both styles). */
  plans: SharedPlanStore;
  warnings: string[];
  logger: RecordingLogger;
  /** `app.request` on the gateway app. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** POST /v1/chat with a JSON body; returns status and parsed JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: response JSON
  chat(body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any }>;
}

export interface HarnessOptions extends ProjectFiles {
  env?: Record<string, string>;
  tools?: AnyTool[];
  /** Where to write the project (default: a new temporary folder). */
  dir?: string;
  /** Features of the embedding program without config, set up after the built-in ones. */
  features?: Feature[];
  /** What the embedding program adds to the house (features with config, channel types, stores, providers): given to loadConfig. */
  extensions?: Extensions;
  token?: string;
  /** Model transport options (e.g. an instant `sleep` so retries do not wait). */
  models?: ModelCatalogOptions;
  /** Times subagents' timeout_ms (e.g. ManualTimers' `timer`, so the test decides when it runs out). */
  timer?: Timer;
  /** Times the heartbeats of streamed answers. */
  heartbeatTimer?: Timer;
  /** The runtime's clock (ManualClock: the test moves time). */
  clock?: Clock;
  /** New pairing codes (default: random). */
  pairingCodes?: () => string;
}

/** A whole gateway (config → agents → runtime → hono app) in-process, without a port. */
export function harness(opts: HarnessOptions = {}): Harness {
  const { dir, loaded, logger, boot } = setUp(opts);
  return assemble(opts, dir, loaded, logger, bootstrap(loaded, boot));
}

/** The same, with the tools the config plugs in (`tools.plugins`) loaded as start-up loads them, and the MCP servers connected. */
export async function pluggedHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const { dir, loaded, logger, boot } = setUp(opts);
  const prepared = await prepare(loaded, boot);
  // MCP servers started (each up or failed once) before the test talks to it: their tools are there, their warnings in `warnings`.
  const connected = await prepared.runtime.connect();
  return assemble(opts, dir, loaded, logger, { ...prepared, warnings: [...prepared.warnings, ...connected] });
}

function setUp(opts: HarnessOptions) {
  const dir = writeProject(
    { config: opts.config ?? {}, ...(opts.agents ? { agents: opts.agents } : {}), ...(opts.files ? { files: opts.files } : {}) },
    opts.dir ?? tempDir(),
  );
  const loaded = loadConfig({ env: opts.env ?? {}, cwd: dir, ...(opts.extensions ? { extensions: opts.extensions } : {}) });
  const logger = recordingLogger();
  return {
    dir,
    loaded,
    logger,
    boot: {
      logger,
      tools: opts.tools ?? [],
      features: opts.features ?? [],
      ...(opts.models ? { models: opts.models } : {}),
      ...(opts.timer ? { timer: opts.timer } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.pairingCodes ? { pairingCodes: opts.pairingCodes } : {}),
    },
  };
}

function assemble(opts: HarnessOptions, dir: string, loaded: LoadedConfig, logger: RecordingLogger, booted: Bootstrapped): Harness {
  const { runtime, warnings } = booted;
  onTestFinished(() => runtime.close(0));
  const { token, allowed_origins, allowed_hosts } = loaded.config.gateway;
  const app = createApp(runtime, {
    token: opts.token ?? token,
    logger,
    allowedOrigins: allowed_origins,
    allowedHosts: allowed_hosts,
    streamQueueBytes: loaded.config.gateway.limits.stream_queue_bytes,
    idempotency: { maxKeys: loaded.config.gateway.limits.idempotency_keys, maxBytes: loaded.config.gateway.limits.idempotency_bytes },
    responses: { maxResponses: loaded.config.gateway.limits.responses_kept, maxBytes: loaded.config.gateway.limits.responses_bytes },
    ...(opts.heartbeatTimer ? { heartbeatTimer: opts.heartbeatTimer } : {}),
    configFile: configFileOf(loaded),
  });
  const request = async (p: string, init?: RequestInit) => app.request(p, init);
  return {
    dir,
    loaded,
    runtime,
    plans: runtime.featureApi(todoFeature)!.plans,
    warnings,
    logger,
    request,
    chat: async (body, headers = {}) => {
      const res = await request("/v1/chat", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    },
  };
}

/** What is on by default and shows in the model's request (file tools, web_fetch, exec, ask_user, memory_search, cron; the skills list) switched off: for tests whose subject is another tool list or prompt. */
export const DEFAULT_TOOLS_OFF = {
  skills: { enabled: false },
  exec: { enabled: false },
  ask_user: { enabled: false },
  memory_search: { enabled: false },
  cron: { enabled: false },
  read_file: { enabled: false },
  write_file: { enabled: false },
  edit_file: { enabled: false },
  append_file: { enabled: false },
  list_dir: { enabled: false },
  web_fetch: { enabled: false },
} as const;

/** A config that points the default model at a fake OpenAI-compatible server. */
export function openaiConfig(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "fake-model", api_base: url, api_key: "sk-test-secret-key-123", ...extra }],
  };
}

/** The section of a loaded config at a dotted path (`tools.todo`), untyped: a feature's sections are typed by its own schema, not by `Config`. */
// biome-ignore lint/suspicious/noExplicitAny: a config section read by path
export const sectionAt = (config: unknown, path: string): any => path.split(".").reduce<any>((node, key) => node?.[key], config);

/** The problems of the ConfigError `fn` throws (a test fails when it throws none, or another error). */
export function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a ConfigError");
}

/** A response's JSON body, untyped (tests assert on its shape). */
// biome-ignore lint/suspicious/noExplicitAny: response JSON
export const jsonOf = (res: Response): Promise<any> => res.json();
