import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Bootstrapped, prepare } from "./bootstrap.js";
import { formatBytes } from "./bytes.js";
import { HOME_CONFIG_FILE, picoclawHome } from "./config/home.js";
import { describeMcpServers, skillsFeature } from "./features/index.js";
import { CronUsageError, cronCommand } from "./cron-cli.js";
import { COMMANDS, type CommandLine, USAGE, UsageError, helpOf, parseCommandLine } from "./cli-usage.js";
import { modelList, statusCommand, storeOf } from "./status-cli.js";
import { PairingUsageError, pairingCommand } from "./pairing-cli.js";
import { table } from "./text-table.js";
import { configFileOf } from "./config/config-file.js";
import { DEFAULT_CONFIG_FILE, type LoadedConfig } from "./config/load.js";
import { loadConfig } from "./house.js";
import { maskSecrets } from "./config/mask.js";
import { AbortedError, ConfigError, PicoclawError, messageOf } from "./errors.js";
import { type RunningGateway, startGateway } from "./gateway/server.js";
import type { EventBus } from "./port/events.js";
import { BUILT_IN_ORIGIN } from "./port/feature.js";
import { logEvents } from "./runtime/streams/event-log.js";
import { CHAT_ID } from "./session/key.js";
import type { HeapSizing } from "./heap-sizing.js";
import { busyWhen } from "./jit-budget.js";
import { type Logger, createLogger, redactingLogger } from "./log.js";
import { onboard } from "./onboard.js";
import { loadPage } from "./page.js";
import { type Redact, noRedaction, redactor } from "./tools/redact.js";

export interface CliIO {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  logger?: Logger;
  /** What `picoclaw agent` without -m reads its chat from (the process's stdin); without it, -m is required. */
  stdin?: NodeJS.ReadableStream;
  /** Whether a person is at a terminal: `agent` then logs warnings only, and the chat shows a prompt. */
  terminal?: boolean;
  /** Writes without a line break (the chat's prompt). */
  prompt?: (text: string) => void;
  /** Sizes the process's V8 heap: for a long-running gateway (`picoclaw gateway`), else V8's own (main.ts gives heap-sizing.ts's, tests none). */
  sizeHeap?: (sizing: HeapSizing) => void;
  /** Sets how soon V8 optimizes the code, at the gateway's first turn (command.ts gives jit-budget.ts's, tests none). */
  setJitBudget?: (bytes: number) => void;
  /** Turns V8's optimizing compiler on (main.ts held it off): the gateway's once busy, another command's at once (command.ts gives jit-budget.ts's, tests none). */
  optimize?: () => void;
  /** Collects the heap once the gateway's turns have left it idle for `idleMs`, and gives back its young generation after `youngMs`; returns what stops it (main.ts gives idle-collect.ts's, tests none). */
  collectWhenIdle?: (idleMs: number, events: Pick<EventBus, "on">, collected: (before: number, after: number) => void, youngMs: number) => () => void;
  /** Drops the compiled code only start-up ran and compacts the heap (`gateway.limits.drop_start_code`): the old generation's bytes before and after. */
  dropStartCode?: () => { before: number; after: number };
  /**
   * Watches the process that started this one (under `npx`, npm's shell):
   * `listener` runs once it is gone, and the gateway stops as on SIGTERM.
   * Returns the function that stops watching.
   */
  onParentExit?: (listener: () => void) => () => void;
}

/** This package's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

/** Runs one CLI command; resolves with the exit code (the gateway resolves when it stops). */
export async function runCli(io: CliIO): Promise<number> {
  let parsed: CommandLine;
  try {
    parsed = parseCommandLine(io.argv);
  } catch (error) {
    return usageFailed(error, io);
  }
  const { command, sub, rest, values } = parsed;
  if (values.version || (command === "version" && !values.help)) {
    io.stdout(`picoclaw ${packageVersion()}`);
    return 0;
  }
  if (command === "help") {
    io.stdout(helpOf(sub ?? ""));
    return sub === undefined || sub in COMMAND_NAMES ? 0 : 2;
  }
  if (values.help || command === undefined) {
    io.stdout(command === undefined ? USAGE : helpOf(command));
    return command === undefined && !values.help ? 2 : 0;
  }
  // A command other than the gateway leaves the heap and its compilers to V8.
  if (command !== "gateway") {
    io.sizeHeap?.({ youngGenerationMiB: 0, heapGrowingPercent: 0 });
    io.optimize?.();
  }
  // Onboarding makes the config; it reads none.
  if (command === "onboard") return onboardCommand(io);
  // Once the config is read, nothing this command prints or logs holds one of its secrets.
  let redact: Redact = noRedaction;
  try {
    const configFlag = typeof values.config === "string" ? ["--config", values.config] : [];
    let loaded = loadConfig({ env: io.env, cwd: io.cwd, argv: configFlag });
    redact = redactor(loaded.secrets);
    if (command === "gateway" || command === "status") loaded = withAddress(loaded, values, command);
    // On a terminal, a one-turn command or a chat shows warnings and errors only, unless PICOCLAW_LOG_LEVEL (or -d) says otherwise.
    const quiet = command === "agent" && io.terminal === true;
    const level = values.debug === true ? "debug" : loaded.env.PICOCLAW_LOG_LEVEL?.trim().toLowerCase() || (quiet ? "warn" : "info");
    const base = io.logger ?? createLogger(level);
    const logger = redact === noRedaction ? base : redactingLogger(base, redact);
    const log: CliLog = { logger, redact };
    const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
    switch (command) {
      case "gateway":
        return await gateway(loaded, log, io);
      case "agent":
        return await agentTurn(loaded, log, io, {
          message: text("message"),
          agent: text("agent"),
          session: text("session"),
          model: text("model"),
          debug: values.debug === true,
        });
      case "agents":
        return await agents(loaded, log, io);
      case "model":
        if (sub !== undefined)
          throw new UsageError(
            `picoclaw model lists the models; to change the default one, set agents.defaults.model_name in the config (got "${sub}")`,
            command,
          );
        return await modelList(loaded, log, io);
      case "status":
        return await statusCommand(loaded, io);
      case "cron":
        try {
          return await cronCommand(loaded, log, io, {
            sub,
            rest,
            session: text("session"),
            agent: text("agent"),
            message: text("message"),
            at: text("at"),
            every: text("every"),
            cron: text("cron"),
            tz: text("tz"),
          });
        } catch (error) {
          if (error instanceof CronUsageError) throw new UsageError(error.message, command);
          throw error;
        }
      case "pairing":
        try {
          return await pairingCommand(loaded, log, io, { sub, rest });
        } catch (error) {
          if (error instanceof PairingUsageError) throw new UsageError(error.message, command);
          throw error;
        }
      case "skills":
        if (sub !== "list") throw new UsageError(`unknown skills command "${sub ?? ""}"; try: picoclaw skills list`, command);
        return await skillsList(loaded, log, io, text("agent"));
      case "config":
        if (sub !== "check") throw new UsageError(`unknown config command "${sub ?? ""}"; try: picoclaw config check`, command);
        return await configCheck(loaded, log, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(redact(`picoclaw: invalid configuration:\n${error.problems.map((p) => `  - ${p}`).join("\n")}`));
      return 2;
    }
    if (error instanceof UsageError) return usageFailed(error, io);
    io.stderr(redact(`picoclaw: ${error instanceof PicoclawError ? `${error.code}: ` : ""}${messageOf(error)}`));
    // A bad request (an unknown agent, a bad session) or set-up (a session folder another gateway owns, or one it cannot use:
    // a full disk) is a usage error; anything else is work that failed.
    return error instanceof PicoclawError && (error.fault === "user" || error.code === "sessions_locked" || error.code === "sessions_unusable") ? 2 : 1;
  }
}

const COMMAND_NAMES = Object.fromEntries(Object.keys(COMMANDS).map((name) => [name, true]));

/** Exit 2: what was wrong, then the help of the command it was about (or the overview). */
function usageFailed(error: unknown, io: CliIO): number {
  const command = error instanceof UsageError ? error.command : undefined;
  io.stderr(`picoclaw: ${messageOf(error)}\n\n${command === undefined ? USAGE : helpOf(command)}`);
  return 2;
}

/**
 * How soon the gateway's code is optimized (src/jit-budget.ts). From the first turn, V8's interrupt budget is
 * `jit_interrupt_budget`, so that the functions the turns run count towards optimization from then on (not before:
 * start-up's code runs once). V8's optimizing compiler, held off since the process began (main.ts), comes on once
 * the gateway is busy: `jit_busy_turns` turns begun within `jit_busy_ms` (0 turns: at once).
 */
function optimizeWhenBusy(runtime: Pick<EventBus, "on">, limits: LoadedConfig["config"]["gateway"]["limits"], io: CliIO, logger: Logger): void {
  const { jit_busy_turns: turns, jit_busy_ms: withinMs, jit_interrupt_budget: budget } = limits;
  const { optimize, setJitBudget } = io;
  if (setJitBudget && budget > 0) {
    const stop = runtime.on("turn.start", () => {
      stop();
      setJitBudget(budget);
    });
  }
  if (!optimize) return;
  if (turns === 0) {
    optimize();
    return;
  }
  const busy = busyWhen(turns, withinMs, Date.now);
  const stop = runtime.on("turn.start", () => {
    if (!busy()) return;
    stop();
    optimize();
    logger.info(`busy: ${turns} turn${turns === 1 ? "" : "s"} within ${withinMs} ms; V8's optimizing compiler is on`);
  });
}

/** `--host` and `--port` over the config's (and the environment's) gateway address. */
function withAddress(loaded: LoadedConfig, values: CommandLine["values"], command: string): LoadedConfig {
  const { host, port } = values;
  if (host === undefined && port === undefined) return loaded;
  if (typeof host === "string" && host.trim() === "") throw new UsageError("--host: expected an address (got an empty one)", command);
  let portNumber: number | undefined;
  if (typeof port === "string") {
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) throw new UsageError(`--port: expected a port number 0-65535 (got ${JSON.stringify(port)})`, command);
    portNumber = Number(port);
  }
  const gatewaySection = {
    ...loaded.config.gateway,
    ...(typeof host === "string" ? { host: host.trim() } : {}),
    ...(portNumber === undefined ? {} : { port: portNumber }),
  };
  return { ...loaded, config: { ...loaded.config, gateway: gatewaySection } };
}

function onboardCommand(io: CliIO): number {
  const home = picoclawHome(io.env, io.cwd);
  if (!home) {
    io.stderr("picoclaw: onboard: set PICOCLAW_HOME (or HOME) to say where the home folder goes");
    return 2;
  }
  const report = onboard(home);
  for (const file of report.created) io.stdout(`created ${file}`);
  for (const file of report.kept) io.stdout(`kept    ${file} (it exists; not changed)`);
  if (existsSync(path.join(io.cwd, DEFAULT_CONFIG_FILE))) {
    io.stdout(`note: ${path.join(io.cwd, DEFAULT_CONFIG_FILE)} exists, and in this folder it is read before ${path.join(home, HOME_CONFIG_FILE)}`);
  }
  io.stdout(
    `Start it with: picoclaw gateway (from a folder without a ${DEFAULT_CONFIG_FILE}), then talk to the agent "main" in ${path.join(home, "workspace")}.`,
  );
  return 0;
}

/** The command's logger, which scrubs the config's secrets with `redact` already (bootstrap need not wrap it again). */
interface CliLog {
  logger: Logger;
  redact: Redact;
}

function printWarnings(warnings: string[], io: CliIO): void {
  for (const warning of warnings) io.stderr(`warning: ${warning}`);
}

async function gateway(loaded: LoadedConfig, { logger, redact }: CliLog, io: CliIO): Promise<number> {
  // SIGTERM/SIGINT are handled from the first moment: a stop while MCP servers start still ends cleanly (exit 0).
  const stopping = new AbortController();
  const onTerm = () => stopping.abort("SIGTERM");
  const onInt = () => stopping.abort("SIGINT");
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  const unwatch = io.onParentExit?.(() => stopping.abort("the npm process that started it ended"));
  let stopCollecting: (() => void) | undefined;
  const { young_generation_mib, heap_growing_percent } = loaded.config.gateway.limits;
  io.sizeHeap?.({ youngGenerationMiB: young_generation_mib, heapGrowingPercent: heap_growing_percent });
  try {
    const { runtime, warnings } = await prepare(loaded, { logger, redact, signal: stopping.signal });
    for (const warning of warnings) logger.warn(warning);
    const tracing = loaded.config.telemetry.otlp.endpoint ? await startTracing(loaded, runtime, logger, redact) : undefined;
    logEvents(runtime, tracing?.logger(logger) ?? logger);
    const { host, port, token, allowed_origins, allowed_hosts, limits } = loaded.config.gateway;
    const loadedPage = loadPage();
    if ("warning" in loadedPage) logger.warn(loadedPage.warning);
    let running: RunningGateway;
    try {
      running = await startGateway({
        runtime,
        host,
        port,
        token,
        logger,
        allowedOrigins: allowed_origins,
        allowedHosts: allowed_hosts,
        ...("page" in loadedPage ? { page: loadedPage.page } : {}),
        configFile: configFileOf(loaded, redact),
        about: {
          version: packageVersion(),
          node: process.version,
          pid: process.pid,
          startedAt: Date.now(),
          now: Date.now,
          store: storeOf(loaded),
        },
        limits: {
          headersTimeoutMs: limits.headers_timeout_ms,
          requestTimeoutMs: limits.request_timeout_ms,
          keepAliveTimeoutMs: limits.keep_alive_timeout_ms,
          sendTimeoutMs: limits.send_timeout_ms,
          maxConnections: limits.max_connections,
          streamQueueBytes: limits.stream_queue_bytes,
          maxStreams: limits.max_streams,
          idempotencyKeys: limits.idempotency_keys,
          idempotencyBytes: limits.idempotency_bytes,
          responsesKept: limits.responses_kept,
          responsesBytes: limits.responses_bytes,
        },
      });
    } catch (error) {
      await runtime.close(0);
      await tracing?.close();
      throw error;
    }
    io.stdout(`picoclaw gateway listening on ${running.url} (agents: ${runtime.agentIds().join(", ")})`);
    optimizeWhenBusy(runtime, limits, io, logger);
    // Once the gateway is ready, what only start-up ran is dropped, unless a turn has begun meanwhile.
    const dropStartCode = io.dropStartCode;
    if (dropStartCode && limits.drop_start_code) {
      let turned = false;
      const stop = runtime.on("turn.start", () => {
        turned = true;
      });
      void running.warmed.then(() => {
        stop();
        if (turned || stopping.signal.aborted) return;
        const { before, after } = dropStartCode();
        logger.info(`started: start-up's code dropped, heap ${formatBytes(before)} -> ${formatBytes(after)}`);
      });
    }
    stopCollecting = io.collectWhenIdle?.(
      limits.idle_collect_ms,
      runtime,
      (before, after) => logger.info(`idle: heap collected, ${formatBytes(before)} -> ${formatBytes(after)}`),
      limits.young_release_ms,
    );
    // Chat channels start once the gateway listens; one that cannot start is a warning, not a failed start-up.
    // Not awaited: a signal must not wait for a channel still reaching its server (closing stops it).
    const starting = runtime.start().then((failures) => {
      for (const failure of failures) logger.warn(failure);
    });
    if (!stopping.signal.aborted) await new Promise((resolve) => stopping.signal.addEventListener("abort", resolve, { once: true }));
    logger.info(`${String(stopping.signal.reason)}: stopping`);
    // Closing the runtime stops the channels first (no more messages), then lets running turns finish.
    await running.close();
    await starting;
    // After the last turn: what is queued goes out.
    await tracing?.close();
    logger.info("stopped");
    return 0;
  } catch (error) {
    if (stopping.signal.aborted && error instanceof AbortedError) {
      logger.info(`${String(stopping.signal.reason)} during start-up: stopped`);
      return 0;
    }
    throw error;
  } finally {
    unwatch?.();
    stopCollecting?.();
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
  }
}

/**
 * Traces (telemetry.otlp.endpoint is set): OpenTelemetry's SDK and the
 * gateway's span maker are loaded here and only here, so a gateway without
 * an endpoint loads none of it and listens to no event for it.
 */
async function startTracing(
  loaded: LoadedConfig,
  runtime: Bootstrapped["runtime"],
  logger: Logger,
  redact: Redact,
): Promise<{ logger(logger: Logger): Logger; close(): Promise<void> }> {
  const { telemetry, model_list } = loaded.config;
  const { otlp } = telemetry;
  const [{ startTraceExport }, { GatewayTracing }] = await Promise.all([import("./gateway/tracing-sdk.js"), import("./gateway/tracing.js")]);
  const exported = startTraceExport({
    endpoint: otlp.endpoint!,
    headers: otlp.headers,
    serviceName: telemetry.service_name,
    serviceVersion: packageVersion(),
    timeoutMs: otlp.timeout_ms,
    maxQueueSpans: otlp.max_queue_spans,
    maxBatchSpans: otlp.max_batch_spans,
    batchDelayMs: otlp.batch_delay_ms,
    logger,
    redact,
  });
  const models = new Map(model_list.map((m) => [m.model_name, { provider: m.provider, model: m.model }]));
  const tracing = new GatewayTracing(runtime, {
    tracer: exported.tracer,
    captureContent: telemetry.capture_content,
    modelOf: (name) => models.get(name),
    redact,
  });
  logger.info(`traces: exporting to ${redact(otlp.endpoint!)}`, { capture_content: telemetry.capture_content });
  return {
    logger: (inner) => tracing.logger(inner),
    close: async () => {
      tracing.close();
      await exported.close();
    },
  };
}

/**
 * Prepares the runtime (plugins), prints start-up warnings, runs `work`, and always closes it.
 * Histories stay in memory: these commands never take the session folder (a gateway may own it).
 * MCP servers start only with `run.connect` (a command that runs turns: it waits until each is up or failed once);
 * a command that describes the config never starts one.
 */
async function withRuntime(
  loaded: LoadedConfig,
  { logger, redact }: CliLog,
  io: CliIO,
  work: (prepared: Bootstrapped) => Promise<number>,
  makeWorkspaces = true,
  nobodyAnswers?: string,
  run: { model?: string; debug?: boolean; connect?: boolean } = {},
): Promise<number> {
  const prepared = await prepare(loaded, {
    logger,
    redact,
    history: "memory",
    makeWorkspaces,
    ...(nobodyAnswers === undefined ? {} : { nobodyAnswers }),
    ...(run.model === undefined ? {} : { model: run.model }),
  });
  printWarnings(prepared.warnings, io);
  if (run.debug) logEvents(prepared.runtime, logger);
  try {
    if (run.connect) printWarnings(await prepared.runtime.connect(), io);
    return await work(prepared);
  } finally {
    await prepared.runtime.close(0);
  }
}

interface AgentArgs {
  message: string | undefined;
  agent: string | undefined;
  session: string | undefined;
  /** A model_name every agent uses for this run. */
  model: string | undefined;
  /** -d: a log line per turn, model answer and failed tool. */
  debug: boolean;
}

function agentTurn(loaded: LoadedConfig, log: CliLog, io: CliIO, values: AgentArgs): Promise<number> {
  const text = values.message;
  if (text === undefined && io.stdin === undefined) throw new UsageError("agent needs -m TEXT", "agent");
  if (values.session !== undefined && !CHAT_ID.test(values.session)) {
    throw new UsageError(`--session: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${JSON.stringify(values.session)})`, "agent");
  }
  const models = loaded.config.model_list.map((entry) => entry.model_name);
  if (values.model !== undefined && !models.includes(values.model)) {
    throw new UsageError(`--model: "${values.model}" is not a model_name in model_list (it has: ${models.join(", ")})`, "agent");
  }
  // A turn here gets the MCP servers' tools: they start (each up or failed once) before it.
  const run = { ...(values.model === undefined ? {} : { model: values.model }), debug: values.debug, connect: true };
  if (text === undefined) {
    const input = io.stdin!;
    return withRuntime(
      loaded,
      log,
      io,
      async ({ runtime }) =>
        // The chat's reader (and node:readline) is loaded only for a chat.
        (await import("./repl.js")).repl(
          runtime,
          { input, terminal: io.terminal === true, stdout: io.stdout, stderr: io.stderr, prompt: io.prompt ?? (() => {}) },
          { agentId: runtime.agent(values.agent ?? runtime.defaultAgentId).id, chatId: values.session ?? "default" },
        ),
      true,
      undefined,
      run,
    );
  }
  return withRuntime(
    loaded,
    log,
    io,
    async ({ runtime }) => {
      const outcome = await runtime.handleMessage({
        agentId: values.agent ?? runtime.defaultAgentId,
        channel: "cli",
        chatId: values.session ?? "default",
        text,
      });
      const last = outcome.delivered.at(-1);
      for (const d of outcome.delivered) if (d !== last) io.stderr(`[${d.from}] ${d.text}`);
      io.stdout(outcome.reply);
      // Background subagents (spawn) answer later: wait for them, then show what they delivered.
      await runtime.idle();
      for (const d of await runtime.takeDeliveries(outcome.sessionKey)) io.stderr(`[later: ${d.from}] ${d.text}`);
      return 0;
    },
    true,
    // One message and no terminal to ask on: a call under "ask" is denied, and the model is told why.
    "nobody is there to answer it (picoclaw agent -m; use the chat, picoclaw agent without -m, or the gateway)",
    run,
  );
}

/** `picoclaw skills list`: the skills an agent has, as its system prompt lists them, and where each comes from. */
function skillsList(loaded: LoadedConfig, log: CliLog, io: CliIO, agentId: string | undefined): Promise<number> {
  return withRuntime(loaded, log, io, async ({ runtime }) => {
    const skills = runtime.featureApi(skillsFeature);
    if (!skills) {
      io.stdout("Skills are off (tools.skills.enabled is false).");
      return 0;
    }
    const agent = runtime.agent(agentId ?? runtime.defaultAgentId);
    const list = await skills.skillsOf(agent);
    if (list.length === 0) {
      io.stdout(`Agent "${agent.id}" has no skills.`);
      return 0;
    }
    io.stdout(
      table(
        ["NAME", "SOURCE", "DESCRIPTION", "PATH"],
        list.map((skill) => [
          skill.name,
          skill.source,
          skill.description.length > 60 ? `${skill.description.slice(0, 57)}...` : skill.description,
          skill.location,
        ]),
      ),
    );
    return 0;
  });
}

/** `picoclaw agents`: each agent and its tools, the tools plugged in, and the MCP servers as the config describes them (none is started). */
function agents(loaded: LoadedConfig, log: CliLog, io: CliIO): Promise<number> {
  return withRuntime(loaded, log, io, async ({ runtime }) => {
    io.stdout(
      table(
        ["ID", "MODEL", "TOOLS", "NAME"],
        runtime.summaries().map((a) => [a.id, a.model, a.tools.join(",") || "-", a.name]),
      ),
    );
    const plugged = runtime.toolOverview().filter((tool) => tool.origin !== BUILT_IN_ORIGIN);
    if (plugged.length > 0) {
      io.stdout("");
      io.stdout(
        table(
          ["TOOL", "FROM", "ENABLED"],
          plugged.map((tool) => [tool.name, tool.origin, tool.enabled ? "yes" : "no"]),
        ),
      );
    }
    const servers = describeMcpServers((loaded.config.tools as { mcp?: Parameters<typeof describeMcpServers>[0] }).mcp, log.redact);
    if (servers.length > 0) {
      io.stdout("");
      io.stdout(
        table(
          ["MCP SERVER", "TOOLS", "RUNS"],
          servers.map((server) => [server.name, server.tools, server.runs]),
        ),
      );
      io.stdout("(MCP servers are not started here: their tools are listed once the gateway has connected to them, in GET /v1/agents)");
    }
    return 0;
  });
}

function configCheck(loaded: LoadedConfig, log: CliLog, io: CliIO): Promise<number> {
  return withRuntime(
    loaded,
    log,
    io,
    async ({ problems }) => {
      // What the gateway starts with (as warnings) but a check must not call OK.
      if (problems.length > 0) throw new ConfigError(problems);
      io.stderr(`config OK: ${loaded.file ?? "(no file; defaults)"}`);
      io.stdout(JSON.stringify(maskSecrets(loaded.config, loaded), null, 2));
      return 0;
    },
    false,
  );
}
