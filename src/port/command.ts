/**
 * Slash commands: messages that start with a known `/word` are answered by
 * the gateway and never reach the model. The runtime has the core commands
 * (`/clear`, `/help`, `/stop`); features add their own.
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
  /**
   * Runs as soon as the message arrives, before it waits for the session
   * (`/clear` denies what waits for a person, so the turn holding the
   * session ends). What it returns is called once the message is done,
   * however it ends (run, refused, or dropped from the queue).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a command that returns nothing (most) is still one
  onArrival?(sessionKey: string): void | (() => void);
  run(ctx: CommandContext): Promise<string> | string;
}
