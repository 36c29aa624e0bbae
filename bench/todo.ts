import { isDeepStrictEqual } from "node:util";
import { createPlanStore, listView } from "../src/features/todo/plans.js";
import { ToolStates } from "../src/tools/tool-states.js";
import { createTodoTool } from "../src/features/todo/list/tool.js";
import { type TodoItem, renderTodoResult, validateTodoArgs } from "../src/features/todo/list/validate.js";
import { fmt, report } from "./support.js";

/**
 * Throughput of the todo tool's execute path (validation → lock → store →
 * result) with 1k sessions writing concurrently, 10-item plans, against a
 * baseline in the same run: the same validation and result serialisation
 * with no store and no lock, the part no implementation can skip.
 */

const SESSIONS = 1000;
const ROUNDS = Number(process.env.BENCH_TODO_ROUNDS ?? 20);
const REPS = 7;

function plan(session: number, round: number) {
  return {
    action: "write",
    todos: Array.from({ length: 10 }, (_, i) => ({
      id: `${i + 1}`,
      content: `Session ${session}, round ${round}: step ${i + 1} — check the “draft” and fix ${i} issues`,
      ...(i % 3 === 0 ? { status: i === 0 ? "in_progress" : "completed" } : {}),
      ...(i % 4 === 0 ? { priority: "high" } : {}),
    })),
  };
}

type Exec = (args: unknown, session: number) => Promise<string>;

async function measure(exec: Exec, argsFor: (session: number, round: number) => unknown): Promise<number> {
  const start = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(Array.from({ length: SESSIONS }, (_, s) => exec(argsFor(s, round), s)));
  }
  return (SESSIONS * ROUNDS) / ((performance.now() - start) / 1000);
}

export async function benchTodo(): Promise<Record<string, number>> {
  const writes = Array.from({ length: SESSIONS }, (_, s) => Array.from({ length: ROUNDS }, (_, r) => plan(s, r)));
  const read = { action: "read" };
  const key = (s: number) => `agent:main:http:bench-${s}`;
  const signal = new AbortController().signal;

  const store = listView(createPlanStore(SESSIONS));
  const tool = createTodoTool(store);
  const state = new ToolStates().view("todo", "main", "bench");
  const full: Exec = async (args, s) =>
    (await tool.execute(args as never, { agentId: "main", sessionKey: key(s), turnId: "t1", callId: "c1", signal, state, publish: () => {} })).forLLM;

  // The baseline validates and serialises exactly as the tool does, and keeps nothing.
  const fixed = (validateTodoArgs(plan(0, 0), { agentId: "main", sessionKey: "k" }) as { todos: TodoItem[] }).todos;
  const baseline: Exec = async (args, s) => {
    const request = validateTodoArgs(args, { agentId: "main", sessionKey: key(s) });
    if ("error" in request) return request.error;
    return request.action === "read" ? renderTodoResult(fixed, "Retrieved") : renderTodoResult(request.todos, "Updated");
  };

  const writeArgs = (s: number, r: number) => writes[s]![r]!;
  const readArgs = () => read;
  // Warm up both paths, then interleave repetitions so noise hits both alike.
  await measure(baseline, writeArgs);
  await measure(full, writeArgs);
  const ratios = { write: [] as number[], read: [] as number[] };
  const rates = { baseWrite: [] as number[], fullWrite: [] as number[], baseRead: [] as number[], fullRead: [] as number[] };
  for (let rep = 0; rep < REPS; rep++) {
    const bw = await measure(baseline, writeArgs);
    const fw = await measure(full, writeArgs);
    const br = await measure(baseline, readArgs);
    const fr = await measure(full, readArgs);
    rates.baseWrite.push(bw);
    rates.fullWrite.push(fw);
    rates.baseRead.push(br);
    rates.fullRead.push(fr);
    ratios.write.push(fw / bw);
    ratios.read.push(fr / br);
  }

  // Every session's plan must be exactly its last write.
  let wrong = 0;
  for (let s = 0; s < SESSIONS; s++) {
    const expected = (validateTodoArgs(writes[s]![ROUNDS - 1], { agentId: "main", sessionKey: key(s) }) as { todos: TodoItem[] }).todos;
    if (!isDeepStrictEqual(store.read("main", key(s)), expected)) wrong++;
  }
  if (wrong > 0) throw new Error(`${wrong} sessions do not hold their last write`);

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const result = {
    baselineWritesPerSec: median(rates.baseWrite),
    writesPerSec: median(rates.fullWrite),
    writeRatio: median(ratios.write),
    baselineReadsPerSec: median(rates.baseRead),
    readsPerSec: median(rates.fullRead),
    readRatio: median(ratios.read),
  };
  report(`todo: execute path, ${SESSIONS} sessions writing concurrently, 10-item plans (median of ${REPS})`, [
    ["baseline writes/s (validate + serialise)", fmt(result.baselineWritesPerSec, 0)],
    ["todo tool writes/s (+ lock + store)", fmt(result.writesPerSec, 0)],
    ["write ratio (target >= 0.70)", `${fmt(result.writeRatio)}x`],
    ["baseline reads/s", fmt(result.baselineReadsPerSec, 0)],
    ["todo tool reads/s", fmt(result.readsPerSec, 0)],
    ["read ratio", `${fmt(result.readRatio)}x`],
    ["sessions holding exactly their last write", `${SESSIONS}/${SESSIONS}`],
  ]);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchTodo();
