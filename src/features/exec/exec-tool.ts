import { nanoid } from "nanoid";
import { z } from "zod";
import { type Tool, type ToolResult, defineTool, toolResult } from "../../tools/tool.js";
import { type Workspace, WorkspaceError } from "../../workspace/workspace.js";
import { type GuardRules, blocked, judgeCommand } from "./command-guard.js";
import { loadShellParser } from "./command-line.js";
import { pathRefusal } from "./command-paths.js";
import { type CommandOutcome, runCommand } from "./command-process.js";
import type { ExecSection } from "./config.js";
import { bwrapArgs } from "./sandbox.js";

/**
 * `exec`, PicoClaw's tool and parameters: runs a command line with `sh -c`
 * in the agent's workspace (or a folder in it) and answers with its output,
 * after the guard (command-guard.ts, command-paths.ts) let it through. Only
 * `action: "run"` in the foreground: PicoClaw's background sessions (`list`,
 * `poll`, `read`, `write`, `kill`, `send-keys`, `background`, `pty`) are
 * refused with a message saying so (README, "exec").
 */

export interface ExecDeps {
  config: ExecSection;
  rules: GuardRules;
  workspaceOf(agentId: string): Promise<Workspace>;
  isChatSession(sessionKey: string): boolean;
  env: Readonly<Record<string, string>>;
  /** bwrap's path when the sandbox is on. */
  bwrap: string | undefined;
  now(): number;
}

const SESSION_ACTIONS = ["list", "poll", "read", "write", "kill", "send-keys"] as const;
const MARKER = "PICOCLAW_EXEC_RUN";
/** PATH for a gateway started without one. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

const flag = z.union([z.string(), z.boolean()]).optional();

const parameters = z.strictObject({
  action: z
    .enum(["run", ...SESSION_ACTIONS])
    .describe("Action: run (execute command). Background sessions (list, poll, read, write, kill, send-keys) are not available on this gateway."),
  command: z.string().optional().describe("Shell command to execute (required for run)"),
  sessionId: z.string().optional().describe("Session ID (background sessions only; not available here)"),
  keys: z.string().optional().describe("Key names for send-keys (not available here)"),
  data: z.string().optional().describe("Data to write to stdin (not available here)"),
  background: flag.describe("Run in background (not available here: commands run in the foreground)"),
  pty: flag.describe("Run in a pseudo-terminal (not available here)"),
  cwd: z.string().optional().describe("Working directory for the command (inside the workspace)"),
  timeout: z.int().min(0).optional().describe("Timeout in seconds (0 = the gateway's limit); never more than the gateway's limit"),
});

const truthy = (value: string | boolean | undefined) => value === true || value === "true";

export function execTool(deps: ExecDeps): Tool {
  const { config } = deps;
  /** What the guard says of a call before any file is looked at: its refusal, or the command line as judged. */
  const refusalOf = async (
    args: z.output<typeof parameters>,
    sessionKey: string,
  ): Promise<
    { refusal: ToolResult; command?: undefined; judged?: undefined } | { refusal?: undefined; command: string; judged: ReturnType<typeof judgeCommand> }
  > => {
    if (args.action !== "run") {
      return {
        refusal: toolResult.error(
          `action "${args.action}" is not available: this gateway runs commands in the foreground only (action "run"), so there are no background sessions to list, poll, read, write, kill or send keys to`,
        ),
      };
    }
    const command = args.command?.trim();
    if (!command) return { refusal: toolResult.error("command is required") };
    if (!config.allow_remote && deps.isChatSession(sessionKey)) {
      return {
        refusal: toolResult.error("exec is restricted to internal channels: this conversation came from a chat channel, and tools.exec.allow_remote is false"),
      };
    }
    if (truthy(args.background) || truthy(args.pty)) {
      return { refusal: toolResult.error("background and pty are not available: this gateway runs commands in the foreground only; run it without them") };
    }
    await loadShellParser();
    const judged = judgeCommand(command, deps.rules);
    if (judged.refusal) return { refusal: toolResult.error(judged.refusal) };
    return { command, judged };
  };
  return defineTool({
    name: "exec",
    description: `Execute a shell command (sh -c) in the workspace and return its output (stdout, then stderr). Commands run in the foreground with stdin closed and are killed after ${config.timeout_seconds > 0 ? `${config.timeout_seconds} seconds` : "the turn's time"}; long output keeps its start and end. Dangerous commands are refused by a safety guard.`,
    parameters,
    enabledByDefault: true,
    // Every command waits for a person's yes unless tools.exec.approval (or the agent's AGENT.md) says otherwise.
    defaultApproval: "ask",
    // Its own limit (timeout_seconds), which kills the process group; the turn's end stops it too.
    timeoutMs: 0,
    // The guard's refusals that need no file system come before a person is asked (and again before it runs).
    precheck: async (args, ctx) => (await refusalOf(args, ctx.sessionKey)).refusal,
    execute: async (args, ctx) => {
      const checked = await refusalOf(args, ctx.sessionKey);
      if (checked.refusal) return checked.refusal;
      const { command, judged } = checked;
      let folder: Awaited<ReturnType<Workspace["openFolder"]>>;
      let workspace: Workspace;
      try {
        workspace = await deps.workspaceOf(ctx.agentId);
        folder = await workspace.openFolder(args.cwd?.trim() || ".");
      } catch (error) {
        if (error instanceof WorkspaceError) return toolResult.error(blocked(error.message));
        throw error;
      }
      try {
        if (workspace.restricted) {
          const refusal = await pathRefusal(command, judged.line, {
            root: workspace.root,
            cwd: folder.realPath,
            listed: (p) => workspace.inReadPaths(p),
          });
          if (refusal) return toolResult.error(refusal);
        }
        const seconds = effectiveTimeout(config.timeout_seconds, args.timeout);
        const inner = ["sh", "-c", command] as const;
        const began = deps.now();
        const outcome = await runCommand({
          argv: deps.bwrap
            ? bwrapArgs(
                deps.bwrap,
                { root: workspace.root, cwd: folder.realPath, network: config.sandbox_network, readPaths: config.sandbox_read_paths },
                inner,
              )
            : inner,
          // The folder as it is held open: a rename or a symlink swapped in since it was checked changes nothing.
          cwd: process.platform === "linux" ? `/proc/${process.pid}/fd/${folder.handle.fd}` : folder.realPath,
          env: { PATH: DEFAULT_PATH, ...deps.env, PWD: folder.realPath, ...(workspace.restricted ? { HOME: workspace.root } : {}) },
          timeoutMs: seconds * 1000,
          signal: ctx.signal,
          maxOutputBytes: config.max_output_bytes,
          marker: { name: MARKER, value: nanoid() },
        });
        return resultOf(outcome, seconds, { command, cwd: workspace.display(folder.realPath), ms: deps.now() - began, sandbox: deps.bwrap ? "bwrap" : "none" });
      } finally {
        await folder.handle.close();
      }
    },
  });
}

/** The seconds a call may run: the config's limit, or the call's own when it asks for less (0: no limit of its own). */
function effectiveTimeout(configured: number, asked: number | undefined): number {
  if (asked === undefined || asked <= 0) return configured;
  return configured === 0 ? asked : Math.min(configured, asked);
}

/** PicoClaw's result: stdout, then `STDERR:` and stderr, the exit code when not 0; the same text for the model and the user. */
function resultOf(outcome: CommandOutcome, seconds: number, details: Record<string, unknown>): ToolResult {
  if (outcome.startError) return toolResult.error(`failed to start command: ${outcome.startError}`);
  let output = outcome.stdout;
  if (outcome.stderr !== "") output += `\nSTDERR:\n${outcome.stderr}`;
  const withDetails = (text: string, isError: boolean): ToolResult => ({
    forLLM: text,
    forUser: text,
    silent: false,
    isError,
    details: { ...details, exitCode: outcome.code, timedOut: outcome.timedOut },
  });
  if (outcome.timedOut) {
    return withDetails(`Command timed out after ${goDuration(seconds)}${output === "" ? "" : `\n\nPartial output before timeout:\n${output}`}`, true);
  }
  if (outcome.aborted) return withDetails(`Command stopped: the turn ended before it finished${output === "" ? "" : `\n\nPartial output:\n${output}`}`, true);
  const failed = outcome.code !== 0;
  if (failed) output += outcome.code === null ? "\n\n[Command exited with code -1] (killed by signal)" : `\n\n[Command exited with code ${outcome.code}]`;
  return withDetails(output === "" ? "(no output)" : output, failed);
}

/** Seconds as Go prints a time.Duration (PicoClaw's timeout message): `45s`, `1m0s`, `1h2m3s`. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
