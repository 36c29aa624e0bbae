import { afterAll, beforeAll } from "vitest";
import { FakeModelServer, type RecordedRequest, type Reply, textCompletion, toolCallCompletion } from "./fake-openai.js";

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
 *   FAIL <status>                      the final answer is this HTTP error instead
 *
 * Rounds are counted from the tool results after the last user message.
 */

interface Script {
  rounds: { name: string; args: string }[][];
  say?: string;
  slowMs: number;
  gate?: string;
  failStatus?: number;
}

function parse(text: string): Script {
  const script: Script = { rounds: [], slowMs: 0 };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || /^\[.*\]$/.test(line)) continue;
    const [word, ...rest] = line.split(" ");
    const arg = rest.join(" ");
    if (word === "SAY") script.say = arg;
    else if (word === "SLOW") script.slowMs = Number(arg);
    else if (word === "WAIT") script.gate = arg;
    else if (word === "FAIL") script.failStatus = Number(arg);
    else if (word === "CALL") {
      script.rounds.push(
        line.split(" && ").map((part) => {
          const m = /^CALL\s+(\S+)\s*(.*)$/.exec(part.trim());
          if (!m) throw new Error(`bad CALL: ${part}`);
          return { name: m[1]!, args: m[2] || "{}" };
        }),
      );
    } else script.say = line;
  }
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
  if (roundsDone < script.rounds.length) {
    return toolCallCompletion(script.rounds[roundsDone]!.map((c) => ({ name: c.name, args: c.args })));
  }
  const reply: Reply = script.failStatus
    ? { status: script.failStatus, json: { error: { message: "scripted failure" } } }
    : textCompletion(script.say ?? `done: ${results.join(" | ")}`);
  const answer = script.slowMs ? { ...reply, delayMs: script.slowMs } : reply;
  return script.gate === undefined ? answer : gateNamed(script.gate).opened.then(() => answer);
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
