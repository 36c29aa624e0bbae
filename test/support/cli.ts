import { Readable } from "node:stream";
import { runCli } from "../../src/cli.js";
import { recordingLogger, writeProject } from "./project.js";

/** `picoclaw agent` without -m on `lines` as its stdin, in a project of its own (or `cwd`): what it printed, line by line, and its prompts. */
export async function cliChat(lines: string, terminal = false, cwd = writeProject({ config: {} })) {
  const out: string[] = [];
  const err: string[] = [];
  const prompts: string[] = [];
  const code = await runCli({
    argv: ["agent", "--session", "repl"],
    env: {},
    cwd,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    prompt: (t) => prompts.push(t),
    stdin: Readable.from([lines]),
    terminal,
    logger: recordingLogger(),
  });
  return { code, out, err, prompts };
}
