import { type ParseArgsConfig, parseArgs } from "node:util";

/**
 * The command line's words: each command's flags (PicoClaw's names where
 * it has them: `agent -s/--session`, `--model`, `-d/--debug`, `gateway
 * --host`) and its `--help` text. A flag a command does not take is a
 * usage error naming it (exit 2), never silently ignored.
 */

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What every command takes. */
const GLOBAL: Options = {
  config: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
};

const GLOBAL_HELP = `Options (every command):
  --config PATH    config file (default: $PICOCLAW_CONFIG, then ./picoclaw.config.json,
                   then $PICOCLAW_HOME/config.json)
  -h, --help       help (picoclaw COMMAND --help: that command's)
  -v, --version    the version`;

interface CommandSpec {
  /** One line for the overview. */
  summary: string;
  /** Its own help: usage lines and flags. */
  help: string;
  options: Options;
}

const debug = { type: "boolean", short: "d" } as const;

export const COMMANDS: Record<string, CommandSpec> = {
  gateway: {
    summary: "gateway [--host H] [--port P] [-d]           start the HTTP gateway",
    help: `Usage: picoclaw gateway [--host HOST] [--port PORT] [-d]

Starts the HTTP gateway (and the config's chat channels, cron, heartbeat).
  --host HOST      address to listen on, over gateway.host and PICOCLAW_GATEWAY_HOST
  --port PORT      port to listen on (0: any free one), over gateway.port and PICOCLAW_GATEWAY_PORT
  -d, --debug      log level debug (over PICOCLAW_LOG_LEVEL)
SIGINT and SIGTERM stop it cleanly (exit 0).`,
    options: { host: { type: "string" }, port: { type: "string" }, debug },
  },
  agent: {
    summary:
      "agent [-m TEXT] [-s ID] [--agent ID] [--model NAME] [-d]\n                                            one turn (-m), or a chat: one message a line, /exit ends",
    help: `Usage: picoclaw agent -m TEXT [-s SESSION] [--agent ID] [--model NAME] [-d]
       picoclaw agent [-s SESSION] [--agent ID] [--model NAME] [-d]

With -m: runs one turn and prints the reply. Without: a chat on stdin, one
message a line; /exit (or the end of the input) ends it.
  -m, --message TEXT   the message (one turn)
  -s, --session ID     the chat id of the session (default "default": agent:<agent>:cli:default)
  --agent ID           the agent (default: agents.default)
  --model NAME         a model_name from model_list every agent uses for this run
  -d, --debug          log level debug, with a line per turn, model answer and failed tool on stderr`,
    options: { message: { type: "string", short: "m" }, session: { type: "string", short: "s" }, agent: { type: "string" }, model: { type: "string" }, debug },
  },
  agents: {
    summary: "agents                                    list agents and their effective tools",
    help: "Usage: picoclaw agents\n\nLists the agents, their models and effective tools, and the tools plugins and MCP servers add.",
    options: {},
  },
  model: {
    summary: "model                                     list the configured models, their providers and the agents using them",
    help: `Usage: picoclaw model

Lists model_list: each model_name, its provider and model, and the agents
that use it (* marks agents.defaults.model_name). To change the default,
set agents.defaults.model_name in the config (or PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME).`,
    options: {},
  },
  status: {
    summary: "status [--host H] [--port P]              is a gateway running for this config (exit 0), or not (exit 1)",
    help: `Usage: picoclaw status [--host HOST] [--port PORT]

Asks the gateway at the config's address (gateway.host, gateway.port, with
its token) for GET /v1/status, and prints its URL, version, uptime,
sessions and store. When nothing answers, says whether a process still
holds the session folder (store jsonl).
  --host HOST      ask at this address instead
  --port PORT      ask at this port instead
Exit codes: 0 a gateway is running, 1 none answers (or it refused the token), 2 bad usage or config.`,
    options: { host: { type: "string" }, port: { type: "string" } },
  },
  skills: {
    summary: "skills list [--agent ID]                  list the skills an agent has (workspace, $PICOCLAW_HOME, built-in)",
    help: "Usage: picoclaw skills list [--agent ID]\n\nLists the skills the agent has (default: agents.default) and where each comes from.\n  --agent ID       the agent",
    options: { agent: { type: "string" } },
  },
  cron: {
    summary: "cron list | add | remove                  scheduled jobs (through the running gateway, or its store)",
    help: `Usage: picoclaw cron list
       picoclaw cron add -s KEY -m TEXT (--at S | --every S | --cron EXPR [--tz ZONE]) [--agent ID]
       picoclaw cron remove ID

Lists, adds or removes scheduled messages, through the running gateway's
API when one answers at the config's address, else in its store.
  -s, --session KEY    a session key (agent:main:telegram:123), or a web session's name
  -m, --message TEXT   what the job sends
  --at S               once, S seconds from now
  --every S            every S seconds
  --cron EXPR          on a cron expression (--tz ZONE: in that time zone)
  --agent ID           the agent a web session's name belongs to (default: agents.default)`,
    options: {
      session: { type: "string", short: "s" },
      message: { type: "string", short: "m" },
      agent: { type: "string" },
      at: { type: "string" },
      every: { type: "string" },
      cron: { type: "string" },
      tz: { type: "string" },
    },
  },
  pairing: {
    summary:
      "pairing list | approve CODE | deny CODE | revoke CHANNEL USER_ID\n                                            chat users waiting with a pairing code, and those let in",
    help: `Usage: picoclaw pairing list
       picoclaw pairing approve CODE
       picoclaw pairing deny CODE
       picoclaw pairing revoke CHANNEL USER_ID

  list      the chat users waiting with a pairing code, and those let in
  approve   let the code's user in (the channel tells them)
  deny      drop a pairing code
  revoke    let a paired user out again`,
    options: {},
  },
  config: {
    summary: "config check                              validate and print the effective config (secrets masked)",
    help: "Usage: picoclaw config check\n\nValidates the config and prints it as the gateway would use it, every secret masked.",
    options: {},
  },
  onboard: {
    summary: "onboard                                   make $PICOCLAW_HOME (~/.picoclaw); never overwrites a file",
    help: "Usage: picoclaw onboard\n\nMakes $PICOCLAW_HOME (~/.picoclaw): config.json, workspace/AGENT.md and empty prompt files; never overwrites a file.",
    options: {},
  },
  version: {
    summary: "version                                   the version (also --version)",
    help: "Usage: picoclaw version\n\nPrints the package's version (picoclaw --version does the same).",
    options: {},
  },
  help: {
    summary: "help [COMMAND]                            this text, or a command's",
    help: "Usage: picoclaw help [COMMAND]",
    options: {},
  },
};

export const USAGE = `picoclaw: a gateway runtime for chat agents

Usage:
${Object.values(COMMANDS)
  .map((spec) => `  picoclaw ${spec.summary}`)
  .join("\n")}

${GLOBAL_HELP}

Exit codes: 0 ok, 1 the work failed (status: no gateway running), 2 bad config or usage.`;

/** A command's help, with the options every command takes. */
export function helpOf(command: string): string {
  const spec = COMMANDS[command];
  return spec ? `${spec.help}\n\n${GLOBAL_HELP}` : USAGE;
}

/** A usage mistake: exit 2, the message, then the help of `command` (or the overview). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export interface CommandLine {
  command: string | undefined;
  sub: string | undefined;
  /** What follows the subcommand. */
  rest: string[];
  values: Record<string, string | boolean | undefined>;
}

/** The command (the first word that is no flag), then its flags, strictly: a flag it does not take throws UsageError naming it. */
export function parseCommandLine(args: string[]): CommandLine {
  const loose = parseArgs({ args, allowPositionals: true, strict: false, options: GLOBAL });
  const command = loose.positionals[0];
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (command !== undefined && !spec) throw new UsageError(`unknown command "${command}"`);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { ...GLOBAL, ...spec?.options } });
  } catch (error) {
    throw new UsageError(flagProblem(error, command), command);
  }
  const [, sub, ...rest] = parsed.positionals;
  return { command, sub, rest, values: parsed.values as CommandLine["values"] };
}

/** node:util's parse error, said in the command's terms. */
function flagProblem(error: unknown, command: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  const where = command === undefined ? "picoclaw" : `picoclaw ${command}`;
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown flag ${unknown[1]} (${where} --help lists its flags)`;
  const missing = /^Option '(?:-\w, )?(--[\w-]+)[^']*' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  const noValue = /^Option '(--[\w-]+)' does not take an argument/.exec(message);
  if (noValue) return `${noValue[1]} takes no value`;
  return message;
}
