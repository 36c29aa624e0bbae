import { type CommandLine, type SimpleCommand, analyse } from "./command-line.js";

/**
 * Whether exec may run a command line, before anything runs: the deny
 * patterns (PicoClaw's and ours, plus custom ones; custom allow patterns
 * exempt a line from them, as in PicoClaw), then the allowlist, each judged
 * on the raw line and on every command in it (see command-line.ts). A line
 * the parser cannot read, or whose program is made by an expansion
 * (`$X -rf /`, `{rm,-rf,/}`, `/bin/r?`), is refused: the guard cannot say
 * what it would run. The answer is the reason, in PicoClaw's words
 * ("Command blocked by safety guard (…)") with what matched.
 */

export interface GuardRules {
  /** The deny patterns in force (none when enable_deny_patterns is false). */
  deny: readonly RegExp[];
  /** custom_allow_patterns: a line matching one skips `deny`. */
  exempt: readonly RegExp[];
  /** allowed_commands: when not empty, every program must be one of them. */
  allowed: ReadonlySet<string>;
}

/** The most characters of a command line (longer is refused before it is parsed). */
export const MAX_COMMAND_CHARS = 64 * 1024;

export const blocked = (why: string) => `Command blocked by safety guard (${why})`;

const shown = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);

export interface Judged {
  /** Why the line may not run, or undefined when it may. */
  refusal?: string;
  /** The line taken apart (for the path checks that follow). */
  line: CommandLine;
}

export function judgeCommand(command: string, rules: GuardRules): Judged {
  const empty: CommandLine = { commands: [], scripts: [], errors: [] };
  if (command.length > MAX_COMMAND_CHARS)
    return { refusal: blocked(`the command is ${command.length} characters, more than ${MAX_COMMAND_CHARS}`), line: empty };
  const line = analyse(command);
  if (line.errors.length > 0) return { refusal: blocked(`it could not be parsed: ${line.errors[0]}`), line };
  const made = line.commands.find((c) => c.program !== undefined && !c.program.literal);
  if (made) return { refusal: blocked(`the program ${shown(made.program!.value)} comes from an expansion or a pattern; write its name out`), line };
  const lower = command.trim().toLowerCase();
  if (!rules.exempt.some((pattern) => pattern.test(lower))) {
    const denied = deniedBy(lower, line, rules.deny);
    if (denied) return { refusal: blocked(`dangerous pattern detected: ${shown(denied.text)} matches ${denied.pattern.source}`), line };
  }
  if (rules.allowed.size > 0) {
    const other = line.commands.find((c) => c.program !== undefined && !rules.allowed.has(programName(c)));
    if (other) return { refusal: blocked(`not in allowlist: ${shown(programName(other))} is not in tools.exec.allowed_commands`), line };
  }
  return { line };
}

const programName = (c: SimpleCommand) => {
  const value = c.program!.value;
  return value.slice(value.lastIndexOf("/") + 1);
};

/** The first text (the line, a command in it written out, a nested script) a deny pattern matches. */
function deniedBy(lower: string, line: CommandLine, deny: readonly RegExp[]): { text: string; pattern: RegExp } | undefined {
  const texts = [lower, ...line.scripts.map((s) => s.trim().toLowerCase()), ...line.commands.map((c) => c.plain.toLowerCase())];
  for (const text of texts) {
    const pattern = deny.find((p) => p.test(text));
    if (pattern) return { text, pattern };
  }
  return undefined;
}
