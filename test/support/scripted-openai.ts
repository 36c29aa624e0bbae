import { afterAll, beforeAll } from "vitest";
import { FakeModelServer, type RecordedRequest, type Reply, completionChunk, sseChunks, textCompletion, toolCallCompletion } from "./fake-openai.js";

/**
 * A fake OpenAI-compatible model driven by the conversation itself, so one
 * server can play parents and children at once. The last user message is a
 * script, one instruction a line (bracketed lines, such as the gateway's
 * context line for a subagent, are skipped):
 *
 *   CALL <tool> <json>                 one tool call in its own round
 *   CALL <tool> <json> && CALL ...     several calls in one round (run side by side)
 *   SAY <text>                         the final answer (default: "done: " and the results)
 *   SLOW <ms>                          the final answer comes after that long
 *   WAIT <gate>                        the final answer comes once the test calls openGate(gate)
 *   GATE <gate>                        the next round (or the final answer) comes once openGate(gate)
 *   STREAM <gate>                      the final answer streams word by word (when the request asks for a
 *                                      stream): the first word at once, the rest once openGate(gate)
 *   FAIL <status>                      the final answer is this HTTP error instead
 *
 * Rounds are counted from the tool results after the last user message.
 */

interface Script {
  rounds: { name: string; args: string }[][];
  /** The gate each round waits for (by round index), and the final answer's (`finalGate`). */
  roundGates: (string | undefined)[];
  finalGate?: string;
  streamGate?: string;
  say?: string;
  slowMs: number;
  gate?: string;
  failStatus?: number;
}

function parse(text: string): Script {
  const script: Script = { rounds: [], roundGates: [], slowMs: 0 };
  let gate: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || /^\[.*\]$/.test(line)) continue;
    const [word, ...rest] = line.split(" ");
    const arg = rest.join(" ");
    if (word === "SAY") script.say = arg;
    else if (word === "SLOW") script.slowMs = Number(arg);
    else if (word === "WAIT") script.gate = arg;
    else if (word === "FAIL") script.failStatus = Number(arg);
    else if (word === "GATE") gate = arg;
    else if (word === "STREAM") script.streamGate = arg;
    else if (word === "CALL") {
      script.roundGates.push(gate);
      gate = undefined;
      script.rounds.push(
        line.split(" && ").map((part) => {
          const m = /^CALL\s+(\S+)\s*(.*)$/.exec(part.trim());
          if (!m) throw new Error(`bad CALL: ${part}`);
          return { name: m[1]!, args: m[2] || "{}" };
        }),
      );
    } else script.say = line;
  }
  if (gate !== undefined) script.finalGate = gate;
  return script;
}

type Message = { role: string; content: string | null };

const gates = new Map<string, { opened: Promise<void>; open: () => void }>();

function gateNamed(name: string) {
  let gate = gates.get(name);
  if (!gate) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.set(name, (gate = { opened, open }));
  }
  return gate;
}

/** Lets every final answer scripted with `WAIT <name>` go, now and from then on. */
export function openGate(name: string): void {
  gateNamed(name).open();
}

export function scriptedModel(request: RecordedRequest): Reply | Promise<Reply> {
  const messages = request.body.messages as Message[];
  let lastUser = messages.length - 1;
  while (lastUser >= 0 && messages[lastUser]!.role !== "user") lastUser--;
  const script = parse(messages[lastUser]?.content ?? "");
  const after = messages.slice(lastUser + 1);
  const roundsDone = after.filter((m) => m.role === "assistant").length;
  const results = after.filter((m) => m.role === "tool").map((m) => m.content ?? "");
  const gated = (gate: string | undefined, reply: Reply | Promise<Reply>): Reply | Promise<Reply> =>
    gate === undefined ? reply : gateNamed(gate).opened.then(() => reply);
  if (roundsDone < script.rounds.length) {
    return gated(script.roundGates[roundsDone], toolCallCompletion(script.rounds[roundsDone]!.map((c) => ({ name: c.name, args: c.args }))));
  }
  const text = script.say ?? `done: ${results.join(" | ")}`;
  const reply: Reply = script.failStatus
    ? { status: script.failStatus, json: { error: { message: "scripted failure" } } }
    : script.streamGate !== undefined && request.body.stream === true
      ? streamedText(text, script.streamGate)
      : textCompletion(text);
  const answer = script.slowMs ? { ...reply, delayMs: script.slowMs } : reply;
  return gated(script.finalGate, script.gate === undefined ? answer : gateNamed(script.gate).opened.then(() => answer));
}

/** A text answer as OpenAI streams it, a word a chunk; the chunks after the first wait for the gate. */
function streamedText(text: string, gate: string): Reply {
  const words = text.match(/\S+\s*/g) ?? [text];
  const events = [
    ...words.map((word, i) => completionChunk(i === 0 ? { role: "assistant", content: word } : { content: word })),
    completionChunk({}, { finish: "stop" }),
    completionChunk(null, { usage: { prompt_tokens: 10, completion_tokens: words.length } }),
  ];
  return { chunks: sseChunks(events), beforeChunk: (index) => (index === 1 ? gateNamed(gate).opened : undefined) };
}

/** A CALL line for a tool whose arguments are an object (JSON inside JSON made easy). */
export const call = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args)}`;

/** A scripted model server shared by a test file: started before its tests, closed after. */
export function useScriptedModel(): { readonly server: FakeModelServer } {
  const holder = {} as { server: FakeModelServer };
  beforeAll(async () => {
    holder.server = await FakeModelServer.start(scriptedModel);
  });
  afterAll(() => holder.server.close());
  return holder;
}
