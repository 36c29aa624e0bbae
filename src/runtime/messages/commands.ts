import type { Command } from "../../port/command.js";

/**
 * The slash commands of a runtime, and the core ones (`/help`, `/clear`,
 * `/new`, `/stop`). A message that starts with a known `/word` is answered by the
 * gateway and never reaches the model; unknown `/words` are ordinary text.
 */

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
    return {
      command,
      args: trimmed
        .slice(found[0].length)
        .replace(/^[ \t]+/, "")
        .replace(/^\r?\n/, ""),
    };
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
    run: () => ["Commands (answered by the gateway, never sent to the model):", ...registry.list().map((c) => `${c.usage} — ${c.description}`)].join("\n"),
  };
}

/**
 * `/clear`: empties the session: its history and its subagents' kept
 * histories, every per-session store (the todo plan among them), the
 * deliveries kept for it; it stops its background subagents and drops their
 * results. `clear` says how many subagents it stopped.
 */
export function clearCommand(clear: (agentId: string, sessionKey: string) => Promise<number>, onArrival?: (sessionKey: string) => () => void): Command {
  return {
    name: "clear",
    usage: "/clear",
    description: "forget this session's conversation, its per-session state (such as the todo plan) and its background work",
    locked: true,
    ...(onArrival ? { onArrival } : {}),
    run: async (ctx) => {
      const subagents = await clear(ctx.agentId, ctx.sessionKey);
      const stopped = subagents === 0 ? "" : `, and ${subagents} running subagent${subagents === 1 ? " was" : "s were"} stopped`;
      return `Cleared: this session's history, plan and undelivered messages are gone${stopped}.`;
    },
  };
}

/** `/new`: the same as `/clear`, by the name chat apps use for starting afresh. */
export function newCommand(clear: (agentId: string, sessionKey: string) => Promise<number>, onArrival?: (sessionKey: string) => () => void): Command {
  return { ...clearCommand(clear, onArrival), name: "new", usage: "/new", description: "start a new conversation: the same as /clear" };
}

/** `/stop`: aborts the running turn and every subagent of the session at once, without waiting for the session lock. */
export function stopCommand(stop: (sessionKey: string) => Promise<{ stopped: boolean; subagents: number }>): Command {
  return {
    name: "stop",
    usage: "/stop",
    description: "stop what the agent is doing in this session, subagents included",
    locked: false,
    run: async (ctx) => {
      const { stopped, subagents } = await stop(ctx.sessionKey);
      if (!stopped) return "Nothing was running.";
      return subagents > 0 ? `Stopped, along with ${subagents} subagent${subagents === 1 ? "" : "s"}.` : "Stopped.";
    },
  };
}
