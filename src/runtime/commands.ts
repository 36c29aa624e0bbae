/**
 * Slash commands: messages that start with a known `/word` are answered by
 * the gateway and never reach the model. Unknown `/words` are ordinary text.
 */

export interface CommandContext {
  agentId: string;
  sessionKey: string;
  /** What followed the command word (leading spaces removed; later lines kept). */
  args: string;
  signal: AbortSignal;
}

export interface Command {
  name: string;
  /** e.g. `/clear`; shown by /help. */
  usage: string;
  description: string;
  /**
   * True (the usual) when the command must wait its turn on the session lock,
   * ordered with the session's turns; false for commands that must act at
   * once, even while a turn runs.
   */
  locked: boolean;
  run(ctx: CommandContext): Promise<string> | string;
}

const COMMAND = /^\/([A-Za-z][A-Za-z0-9_-]*)(?=\s|$)/;

export class CommandRegistry {
  private readonly commands = new Map<string, Command>();

  constructor(commands: Iterable<Command> = []) {
    for (const command of commands) this.add(command);
  }

  add(command: Command): void {
    if (this.commands.has(command.name)) throw new TypeError(`two commands are named /${command.name}`);
    this.commands.set(command.name, command);
  }

  /** The command a message invokes and its arguments, or null when it is for the model. */
  match(text: string): { command: Command; args: string } | null {
    const trimmed = text.replace(/^\s+/, "");
    const found = COMMAND.exec(trimmed);
    if (!found) return null;
    const command = this.commands.get(found[1]!.toLowerCase());
    if (!command) return null;
    return { command, args: trimmed.slice(found[0].length).replace(/^[ \t]+/, "").replace(/^\r?\n/, "") };
  }

  list(): Command[] {
    return [...this.commands.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}

/** `/help`: the commands, one a line. */
export function helpCommand(registry: CommandRegistry): Command {
  return {
    name: "help",
    usage: "/help",
    description: "list the commands",
    locked: false,
    run: () =>
      ["Commands (answered by the gateway, never sent to the model):", ...registry.list().map((c) => `${c.usage} — ${c.description}`)].join(
        "\n",
      ),
  };
}

/** `/clear`: empties the session's history, then every per-session store (the todo plan among them). */
export function clearCommand(clear: (agentId: string, sessionKey: string) => Promise<void>): Command {
  return {
    name: "clear",
    usage: "/clear",
    description: "forget this session's conversation and its per-session state (such as the todo plan)",
    locked: true,
    run: async (ctx) => {
      await clear(ctx.agentId, ctx.sessionKey);
      return "Cleared: this session's history and plan are gone.";
    },
  };
}

/** `/stop`: aborts the running turn and every subagent of the session at once, without waiting for the session lock. */
export function stopCommand(stop: (sessionKey: string) => { stopped: boolean; subagents: number }): Command {
  return {
    name: "stop",
    usage: "/stop",
    description: "stop what the agent is doing in this session, subagents included",
    locked: false,
    run: (ctx) => {
      const { stopped, subagents } = stop(ctx.sessionKey);
      if (!stopped) return "Nothing was running.";
      return subagents > 0 ? `Stopped, along with ${subagents} subagent${subagents === 1 ? "" : "s"}.` : "Stopped.";
    },
  };
}

/** `/subagents`: the session's running subagents. */
export function subagentsCommand(
  list: (sessionKey: string) => { id: string; label: string; agentId: string; depth: number; startedAt: number }[],
  now: () => number,
): Command {
  return {
    name: "subagents",
    usage: "/subagents",
    description: "list the subagents running for this session",
    locked: false,
    run: (ctx) => {
      const children = list(ctx.sessionKey);
      if (children.length === 0) return "No subagents are running.";
      return [
        `${children.length} subagent${children.length === 1 ? "" : "s"} running:`,
        ...children.map(
          (c) => `- ${c.label} (${c.id}): agent ${c.agentId}, depth ${c.depth}, running for ${Math.max(0, Math.round((now() - c.startedAt) / 1000))} s`,
        ),
      ].join("\n");
    },
  };
}
