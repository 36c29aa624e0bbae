import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Bootstrapped, prepare } from "./bootstrap.js";
import { HOME_CONFIG_FILE, picoclawHome } from "./config/home.js";
import { skillsFeature } from "./features/index.js";
import { CronUsageError, cronCommand } from "./cron-cli.js";
import { PairingUsageError, pairingCommand } from "./pairing-cli.js";
import { table } from "./text-table.js";
import { configFileOf } from "./config/config-file.js";
import { DEFAULT_CONFIG_FILE, type LoadedConfig } from "./config/load.js";
import { loadConfig } from "./house.js";
import { maskSecrets } from "./config/mask.js";
import { AbortedError, ConfigError, PicoclawError, messageOf } from "./errors.js";
import { type RunningGateway, startGateway } from "./gateway/server.js";
import { BUILT_IN_ORIGIN } from "./port/feature.js";
import { logEvents } from "./runtime/streams/event-log.js";
import { CHAT_ID } from "./session/key.js";
import { type Logger, createLogger, redactingLogger } from "./log.js";
import { onboard } from "./onboard.js";
import { loadPage } from "./page.js";
import { type Redact, noRedaction, redactor } from "./tools/redact.js";

const USAGE = `picoclaw: a gateway runtime for chat agents

Usage:
  picoclaw gateway                          start the HTTP gateway
  picoclaw agent -m TEXT [--agent ID] [--session ID]
                                            run one turn, print the reply
  picoclaw agent [--agent ID] [--session ID]
                                            chat: one message a line, /exit ends
  picoclaw agents                           list agents and their effective tools
  picoclaw skills list [--agent ID]         list the skills an agent has (workspace, $PICOCLAW_HOME, built-in)
  picoclaw cron list                        list the scheduled jobs (through the running gateway, or its store)
  picoclaw cron add --session KEY --message TEXT (--at S | --every S | --cron EXPR [--tz ZONE])
                                            schedule a message for a session (KEY, or a web session's name)
  picoclaw cron remove ID                   remove a scheduled job
  picoclaw pairing list                     list the chat users waiting with a pairing code, and those let in
  picoclaw pairing approve CODE             let the code's user in (the channel tells them)
  picoclaw pairing deny CODE                drop a pairing code
  picoclaw pairing revoke CHANNEL USER_ID   let a paired user out again
  picoclaw config check                     validate and print the effective config (secrets masked)
  picoclaw onboard                          make $PICOCLAW_HOME (~/.picoclaw): config.json, workspace/AGENT.md
                                            and empty prompt files; never overwrites a file

Options (every command):
  --config PATH    config file (default: $PICOCLAW_CONFIG, then ./picoclaw.config.json,
                   then $PICOCLAW_HOME/config.json)
  -h, --help       this text
  -v, --version    the version

Exit codes: 0 ok, 1 the work failed, 2 bad config or usage.`;

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
}

class UsageError extends Error {}

function parseCommandLine(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      message: { type: "string", short: "m" },
      agent: { type: "string" },
      session: { type: "string" },
      at: { type: "string" },
      every: { type: "string" },
      cron: { type: "string" },
      tz: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
}

/** This package's version, from its package.json. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

/** Runs one CLI command; resolves with the exit code (the gateway resolves when it stops). */
export async function runCli(io: CliIO): Promise<number> {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(io.argv);
  } catch (error) {
    io.stderr(`${messageOf(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, sub] = positionals;
  if (values.version) {
    io.stdout(`picoclaw ${packageVersion()}`);
    return 0;
  }
  if (values.help || command === undefined || command === "help") {
    io.stdout(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  // Onboarding makes the config; it reads none.
  if (command === "onboard") return onboardCommand(io);
  // Once the config is read, nothing this command prints or logs holds one of its secrets.
  let redact: Redact = noRedaction;
  try {
    const loaded = loadConfig({ env: io.env, cwd: io.cwd, argv: values.config ? ["--config", values.config] : [] });
    redact = redactor(loaded.secrets);
    // On a terminal, a one-turn command or a chat shows warnings and errors only, unless PICOCLAW_LOG_LEVEL says otherwise.
    const quiet = command === "agent" && io.terminal === true;
    const base = io.logger ?? createLogger(loaded.env.PICOCLAW_LOG_LEVEL?.trim().toLowerCase() || (quiet ? "warn" : "info"));
    const logger = redact === noRedaction ? base : redactingLogger(base, redact);
    const log: CliLog = { logger, redact };
    switch (command) {
      case "gateway":
        return await gateway(loaded, log, io);
      case "agent":
        return await agentTurn(loaded, log, io, values);
      case "agents":
        return await agents(loaded, log, io);
      case "cron":
        try {
          return await cronCommand(loaded, log, io, { sub, rest: positionals.slice(2), ...values });
        } catch (error) {
          if (error instanceof CronUsageError) throw new UsageError(error.message);
          throw error;
        }
      case "pairing":
        try {
          return await pairingCommand(loaded, log, io, { sub, rest: positionals.slice(2) });
        } catch (error) {
          if (error instanceof PairingUsageError) throw new UsageError(error.message);
          throw error;
        }
      case "skills":
        if (sub !== "list") throw new UsageError(`unknown skills command "${sub ?? ""}"; try: picoclaw skills list`);
        return await skillsList(loaded, log, io, values.agent);
      case "config":
        if (sub !== "check") throw new UsageError(`unknown config command "${sub ?? ""}"; try: picoclaw config check`);
        return await configCheck(loaded, log, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(redact(`picoclaw: invalid configuration:\n${error.problems.map((p) => `  - ${p}`).join("\n")}`));
      return 2;
    }
    if (error instanceof UsageError) {
      io.stderr(`picoclaw: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    io.stderr(redact(`picoclaw: ${error instanceof PicoclawError ? `${error.code}: ` : ""}${messageOf(error)}`));
    // A bad request (an unknown agent, a bad session) or set-up (a session folder another gateway owns) is a usage error; anything else is work that failed.
    return error instanceof PicoclawError && (error.fault === "user" || error.code === "sessions_locked") ? 2 : 1;
  }
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

/** Columns padded to their widest cell; the last column is not padded. */

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
  try {
    const { runtime, warnings } = await prepare(loaded, { logger, redact, signal: stopping.signal });
    for (const warning of warnings) logger.warn(warning);
    logEvents(runtime, logger);
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
        limits: {
          headersTimeoutMs: limits.headers_timeout_ms,
          requestTimeoutMs: limits.request_timeout_ms,
          keepAliveTimeoutMs: limits.keep_alive_timeout_ms,
          maxConnections: limits.max_connections,
          streamQueueBytes: limits.stream_queue_bytes,
          idempotencyKeys: limits.idempotency_keys,
          idempotencyBytes: limits.idempotency_bytes,
          responsesKept: limits.responses_kept,
          responsesBytes: limits.responses_bytes,
        },
      });
    } catch (error) {
      await runtime.close(0);
      throw error;
    }
    io.stdout(`picoclaw gateway listening on ${running.url} (agents: ${runtime.agentIds().join(", ")})`);
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
    logger.info("stopped");
    return 0;
  } catch (error) {
    if (stopping.signal.aborted && error instanceof AbortedError) {
      logger.info(`${String(stopping.signal.reason)} during start-up: stopped`);
      return 0;
    }
    throw error;
  } finally {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
  }
}

/**
 * Prepares the runtime (plugins, MCP servers), prints start-up warnings, runs `work`, and always closes it.
 * Histories stay in memory: these commands never take the session folder (a gateway may own it).
 */
async function withRuntime(
  loaded: LoadedConfig,
  { logger, redact }: CliLog,
  io: CliIO,
  work: (prepared: Bootstrapped) => Promise<number>,
  makeWorkspaces = true,
  nobodyAnswers?: string,
): Promise<number> {
  const prepared = await prepare(loaded, { logger, redact, history: "memory", makeWorkspaces, ...(nobodyAnswers === undefined ? {} : { nobodyAnswers }) });
  printWarnings(prepared.warnings, io);
  try {
    return await work(prepared);
  } finally {
    await prepared.runtime.close(0);
  }
}

function agentTurn(loaded: LoadedConfig, log: CliLog, io: CliIO, values: { message?: string; agent?: string; session?: string }): Promise<number> {
  const text = values.message;
  if (text === undefined && io.stdin === undefined) throw new UsageError("agent needs -m TEXT");
  if (values.session !== undefined && !CHAT_ID.test(values.session)) {
    throw new UsageError(`--session: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${JSON.stringify(values.session)})`);
  }
  if (text === undefined) {
    const input = io.stdin!;
    return withRuntime(loaded, log, io, async ({ runtime }) =>
      // The chat's reader (and node:readline) is loaded only for a chat.
      (await import("./repl.js")).repl(
        runtime,
        { input, terminal: io.terminal === true, stdout: io.stdout, stderr: io.stderr, prompt: io.prompt ?? (() => {}) },
        { agentId: runtime.agent(values.agent ?? runtime.defaultAgentId).id, chatId: values.session ?? "default" },
      ),
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
