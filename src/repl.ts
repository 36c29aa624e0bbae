import { createInterface } from "node:readline";
import type { Runtime } from "./runtime/runtime.js";

export interface ReplIO {
  input: NodeJS.ReadableStream;
  /** Whether a person types at a terminal (prompts are shown only then). */
  terminal: boolean;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  prompt: (text: string) => void;
}

/**
 * `picoclaw agent` without `-m`: a simple chat, one message a line, in one
 * session, until `/exit` or the end of the input. Slash commands work as in
 * any chat; what the agent delivers besides its answer goes to stderr.
 */
export async function repl(runtime: Runtime, io: ReplIO, target: { agentId: string; chatId: string }): Promise<number> {
  const lines = createInterface({ input: io.input, terminal: false });
  if (io.terminal) {
    io.stderr(`Chatting with agent "${target.agentId}"; /exit ends, /help lists the commands.`);
    io.prompt("> ");
  }
  for await (const line of lines) {
    const text = line.trim();
    if (text === "/exit" || text === "/quit") break;
    if (text !== "") {
      const outcome = await runtime.handleMessage({ agentId: target.agentId, channel: "cli", chatId: target.chatId, text });
      const last = outcome.delivered.at(-1);
      for (const d of [...(await runtime.takeDeliveries(outcome.sessionKey)), ...outcome.delivered]) if (d !== last) io.stderr(`[${d.from}] ${d.text}`);
      io.stdout(outcome.reply);
    }
    if (io.terminal) io.prompt("> ");
  }
  lines.close();
  return 0;
}
