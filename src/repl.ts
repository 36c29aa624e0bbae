import { createInterface } from "node:readline";
import type { Decision } from "./port/approvals.js";
import type { Runtime } from "./runtime/runtime.js";
import type { MessageOutcome } from "./runtime/options.js";
import { sessionKeyFor } from "./session/key.js";

export interface ReplIO {
  input: NodeJS.ReadableStream;
  /** Whether a person types at a terminal (prompts are shown only then). */
  terminal: boolean;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  prompt: (text: string) => void;
}

/** What waits for the person at the terminal while a turn runs. */
type Request =
  | { kind: "approval"; id: string; tool: string; arguments: unknown }
  | { kind: "question"; id: string; question: string; options: readonly string[] };

/** The answers to an approval question, by the letter typed. */
const ANSWERS: Readonly<Record<string, Decision>> = { y: "allow", yes: "allow", n: "deny", no: "deny", a: "allow_session", always: "allow_session" };

/** Lines of the input, one at a time; undefined once it ends. */
function lineReader(input: NodeJS.ReadableStream) {
  const lines = createInterface({ input, terminal: false });
  const queued: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  lines.on("line", (line) => {
    queued.push(line);
    wake?.();
  });
  lines.on("close", () => {
    ended = true;
    wake?.();
  });
  return {
    async next(): Promise<string | undefined> {
      while (queued.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      return queued.shift();
    },
    close: () => lines.close(),
  };
}

/**
 * `picoclaw agent` without `-m`: a simple chat, one message a line, in one
 * session, until `/exit` or the end of the input. Slash commands work as in
 * any chat; what the agent delivers besides its answer goes to stderr. A
 * tool call that needs approval is asked on the terminal (y: allow, n:
 * deny, a: allow for the rest of the session), and an `ask_user` question
 * takes the next line as its answer.
 */
export async function repl(runtime: Runtime, io: ReplIO, target: { agentId: string; chatId: string }): Promise<number> {
  const lines = lineReader(io.input);
  const sessionKey = sessionKeyFor(target.agentId, "cli", target.chatId);
  const requests: Request[] = [];
  let arrived: (() => void) | undefined;
  const add = (request: Request) => {
    requests.push(request);
    arrived?.();
  };
  const stops = [
    runtime.on("approval.requested", (e) => {
      if (e.sessionKey === sessionKey) add({ kind: "approval", id: e.id, tool: e.tool, arguments: e.arguments });
    }),
    runtime.on("question.asked", (e) => {
      if (e.sessionKey === sessionKey) add({ kind: "question", id: e.id, question: e.question, options: e.options });
    }),
  ];
  /** Asks the person what they decide on each request that comes while the message's turn runs; resolves with its outcome. */
  const answerWhileRunning = async (running: Promise<MessageOutcome>): Promise<MessageOutcome | undefined> => {
    let outcome: MessageOutcome | undefined;
    let failed: unknown;
    let settled = false;
    const done = running.then(
      (o) => {
        outcome = o;
      },
      (error: unknown) => {
        failed = error;
      },
    );
    void done.finally(() => {
      settled = true;
      arrived?.();
    });
    for (;;) {
      const request = requests.shift();
      if (request) {
        if (await ask(request)) continue;
        // The input ended with a request unanswered: nobody is left to answer, so the turn is stopped (which denies it).
        await runtime.stop(sessionKey);
        break;
      }
      if (settled) break;
      await new Promise<void>((resolve) => (arrived = resolve));
    }
    await done;
    if (failed !== undefined) throw failed;
    return outcome;
  };
  /** One request asked and answered; false when the input ended first. */
  const ask = async (request: Request): Promise<boolean> => {
    if (request.kind === "approval") {
      io.stderr(`[approval] ${request.tool} wants to run with ${JSON.stringify(request.arguments)}`);
      for (;;) {
        io.prompt("Allow? [y]es, [n]o, [a]lways in this session: ");
        const line = await lines.next();
        if (line === undefined) return false;
        const decision = ANSWERS[line.trim().toLowerCase()];
        if (decision === undefined) {
          io.stderr("Answer y, n or a.");
          continue;
        }
        const outcome = runtime.approvals.decide(sessionKey, request.id, decision, "repl");
        if (outcome.result === "settled") io.stderr(`[approval] decided already: ${outcome.decision} (${outcome.by})`);
        else if (outcome.result === "unknown") io.stderr("[approval] it is no longer waiting");
        return true;
      }
    }
    io.stderr(`[question] ${request.question}${request.options.length ? ` (${request.options.join(" / ")})` : ""}`);
    io.prompt("Answer: ");
    const line = await lines.next();
    if (line === undefined) return false;
    // Too late (its time ran out meanwhile): the line would start a turn of its own, which nobody meant.
    if (!runtime.approvals.questions(sessionKey).some((q) => q.id === request.id)) {
      io.stderr("[question] it is no longer waiting (its time ran out); that answer was not sent");
      return true;
    }
    // The answer is the session's next message: it answers the question and starts no turn.
    await runtime.handleMessage({ agentId: target.agentId, channel: "cli", chatId: target.chatId, text: line.trim() });
    return true;
  };

  if (io.terminal) {
    io.stderr(`Chatting with agent "${target.agentId}"; /exit ends, /help lists the commands.`);
    io.prompt("> ");
  }
  try {
    for (;;) {
      const line = await lines.next();
      if (line === undefined) break;
      const text = line.trim();
      if (text === "/exit" || text === "/quit") break;
      if (text !== "") {
        const outcome = await answerWhileRunning(runtime.handleMessage({ agentId: target.agentId, channel: "cli", chatId: target.chatId, text }));
        if (outcome) {
          const last = outcome.delivered.at(-1);
          for (const d of [...(await runtime.takeDeliveries(outcome.sessionKey)), ...outcome.delivered]) if (d !== last) io.stderr(`[${d.from}] ${d.text}`);
          io.stdout(outcome.reply);
        }
      }
      if (io.terminal) io.prompt("> ");
    }
  } finally {
    for (const stop of stops) stop();
    lines.close();
  }
  return 0;
}
