import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChatMessage } from "../src/models/message.js";
import { fileNameOf } from "../src/session/jsonl/file-names.js";
import { JsonlHistoryStore } from "../src/session/jsonl/jsonl-store.js";
import { toLines } from "../src/session/jsonl/transcript.js";
import { ensureBuilt } from "./memory.js";
import { gatewayProject, startGateway } from "./processes.js";
import { fmt, instantModel, percentile, report, timed } from "./support.js";

/**
 * What keeping sessions on disk costs, measured as a user runs it: two
 * gateway processes (`node dist/main.js gateway`), each in a folder with the
 * shipped `main` agent and a config that only points the model at an
 * instant local fake and switches `todo` on (the tool of the turn), one with
 * the defaults (`session.store: "jsonl"`), one with `"memory"`. Turns go to
 * both in turn, so machine noise hits both alike. A turn is a tool turn:
 * model call → tool call (`todo read`) → model call → reply, its history
 * written (one append, synced) before the reply comes back.
 *
 * Two loads: a new session every turn (a new file each time: the file and
 * its folder synced), and 10 conversations taking turns (appends to files
 * that grow). Then the reload of a session of 10,000 messages: in-process
 * (open the folder, hold the session: read, parse, repair, bound), and
 * through a freshly started gateway (its first turn on the session, minus
 * the same turn once it is in memory).
 */

const TURNS = Number(process.env.BENCH_TURNS ?? 400);
const WARMUP = 50;
const RELOAD_MESSAGES = 10_000;

interface Gateway {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

async function startGatewayIn(config: unknown, dir?: string): Promise<Gateway> {
  const folder = gatewayProject("persist", config, dir);
  const proc = await startGateway(folder.dir);
  return { url: proc.url, dir: folder.dir, stop: () => proc.stop() };
}

async function turn(url: string, session: string, message = "read the plan"): Promise<void> {
  const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });
  const body = (await res.json()) as { reply?: string };
  if (body.reply !== "done") throw new Error(`unexpected answer: ${JSON.stringify(body).slice(0, 300)}`);
}

/** Interleaved turns to both gateways; `session(i)` names the i-th turn's session. */
async function compare(jsonl: Gateway, memory: Gateway, session: (i: number) => string) {
  for (let i = 0; i < WARMUP; i++) {
    await turn(jsonl.url, `warm${i}`);
    await turn(memory.url, `warm${i}`);
  }
  const disk: number[] = [];
  const mem: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    // Alternate which goes first, so neither always follows the other.
    const order = i % 2 === 0 ? [jsonl, memory] : [memory, jsonl];
    for (const gateway of order) (gateway === jsonl ? disk : mem).push((await timed(() => turn(gateway.url, session(i)))).ms);
  }
  const total = (samples: number[]) => samples.reduce((a, b) => a + b, 0);
  return {
    memoryP50: percentile(mem, 50),
    jsonlP50: percentile(disk, 50),
    p50Ratio: percentile(disk, 50) / percentile(mem, 50),
    ratio: total(disk) / total(mem),
  };
}

/** A conversation of `count` messages in tool turns of four: a question, a tool call, its result, an answer. */
function conversation(count: number): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let n = 0; messages.length < count; n++) {
    messages.push(
      { role: "user", content: `Question ${n}: ${"what about this part of the plan? ".repeat(4)}` },
      { role: "assistant", content: null, tool_calls: [{ id: `call_${n}`, type: "function", function: { name: "todo", arguments: '{"action":"read"}' } }] },
      { role: "tool", tool_call_id: `call_${n}`, content: `{"todos":[],"total_count":0,"message":"Retrieved 0 todos"} ${"result text ".repeat(20)}` },
      { role: "assistant", content: `Answer ${n}: ${"here is what I found and what to do next. ".repeat(5)}` },
    );
  }
  return messages.slice(0, count);
}

export async function benchPersist(): Promise<Record<string, number>> {
  ensureBuilt();
  const model = await instantModel("todo", { action: "read" });
  const base = {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: model.url, stream: false }],
    tools: { todo: { enabled: true } },
  };
  const jsonl = await startGatewayIn(base);
  const memory = await startGatewayIn({ ...base, session: { store: "memory" } });
  let fresh: Awaited<ReturnType<typeof compare>>;
  let ongoing: Awaited<ReturnType<typeof compare>>;
  try {
    fresh = await compare(jsonl, memory, (i) => `new${i}`);
    ongoing = await compare(jsonl, memory, (i) => `talk${i % 10}`);
  } finally {
    await jsonl.stop();
    await memory.stop();
    rmSync(jsonl.dir, { recursive: true, force: true });
    rmSync(memory.dir, { recursive: true, force: true });
  }

  // Reload: a session of 10,000 messages, kept whole (its limits raised to hold it).
  const limits = { max_history_messages: RELOAD_MESSAGES, max_history_bytes: 64 * 1024 * 1024 };
  const dir = mkdtempSync(path.join(tmpdir(), "picoclaw-bench-reload-"));
  const key = "agent:main:http:long";
  const text = toLines(conversation(RELOAD_MESSAGES));
  mkdirSync(path.join(dir, "sessions"), { recursive: true });
  writeFileSync(path.join(dir, "sessions", `${fileNameOf(key)}.jsonl`), text);
  const loads: number[] = [];
  for (let i = 0; i < 7; i++) {
    loads.push(
      (
        await timed(async () => {
          const store = JsonlHistoryStore.open({
            dir: path.join(dir, "sessions"),
            maxMessages: limits.max_history_messages,
            maxBytes: limits.max_history_bytes,
          });
          (await store.hold(key))();
          const reloaded = (await store.get(key)).length;
          if (reloaded !== RELOAD_MESSAGES) throw new Error(`reloaded ${reloaded} messages`);
          await store.close();
        })
      ).ms,
    );
  }
  const gateway = await startGatewayIn({ ...base, agents: { defaults: { model_name: "fake", ...limits } } }, dir);
  let firstTurn: number;
  let warmTurns: number[];
  try {
    firstTurn = (await timed(() => turn(gateway.url, "long"))).ms;
    warmTurns = [];
    for (let i = 0; i < 9; i++) warmTurns.push((await timed(() => turn(gateway.url, "long"))).ms);
  } finally {
    await gateway.stop();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const result = {
    turns: TURNS,
    newSessionMemoryP50: fresh.memoryP50,
    newSessionJsonlP50: fresh.jsonlP50,
    newSessionRatio: fresh.ratio,
    newSessionP50Ratio: fresh.p50Ratio,
    ongoingMemoryP50: ongoing.memoryP50,
    ongoingJsonlP50: ongoing.jsonlP50,
    ongoingRatio: ongoing.ratio,
    ongoingP50Ratio: ongoing.p50Ratio,
    reloadMs: percentile(loads, 50),
    reloadFileMiB: Buffer.byteLength(text) / (1024 * 1024),
    firstTurnMs: firstTurn,
    warmTurnMs: percentile(warmTurns, 50),
  };
  report("persist: a tool turn with session.store jsonl (fsync included) vs memory, separate gateway processes; reload of 10,000 messages", [
    ["turns per load", String(TURNS)],
    ["new session each turn: memory / jsonl p50 (ms)", `${fmt(result.newSessionMemoryP50, 3)} / ${fmt(result.newSessionJsonlP50, 3)}`],
    ["  ratio jsonl/memory: p50, total", `${fmt(result.newSessionP50Ratio)}x, ${fmt(result.newSessionRatio)}x`],
    ["10 conversations: memory / jsonl p50 (ms)", `${fmt(result.ongoingMemoryP50, 3)} / ${fmt(result.ongoingJsonlP50, 3)}`],
    ["  ratio jsonl/memory: p50, total", `${fmt(result.ongoingP50Ratio)}x, ${fmt(result.ongoingRatio)}x`],
    [`reload ${RELOAD_MESSAGES} messages (${fmt(result.reloadFileMiB, 1)} MiB), in-process p50 (ms)`, fmt(result.reloadMs, 1)],
    ["  through a fresh gateway: first turn / warm turn p50 (ms)", `${fmt(result.firstTurnMs, 1)} / ${fmt(result.warmTurnMs, 1)}`],
  ]);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPersist();
