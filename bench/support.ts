import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LoadedConfig } from "../src/config/load.js";
import { loadConfig } from "../src/house.js";

/** Small helpers shared by the benchmarks: timing, percentiles, an instant fake model. */

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

export function report(title: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`\n== ${title}`);
  for (const [key, value] of rows) console.log(`  ${key.padEnd(width)}  ${value}`);
}

/**
 * An instant OpenAI-compatible server: when the last message is from the
 * user it calls `tool` with `args`; after a tool result it answers "done".
 * `delayMs` makes every answer wait that long.
 */
export async function instantModel(tool: string, args: unknown, delayMs = 0): Promise<{ url: string; close(): Promise<void>; calls(): number }> {
  let calls = 0;
  const toolCall = JSON.stringify({
    id: "b",
    object: "chat.completion",
    created: 0,
    model: "bench",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
        },
        finish_reason: "tool_calls",
      },
    ],
  });
  const done = JSON.stringify({
    id: "b",
    object: "chat.completion",
    created: 0,
    model: "bench",
    choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
  });
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      calls++;
      const body = JSON.parse(Buffer.concat(parts).toString()) as { messages: { role: string }[] };
      const last = body.messages.at(-1)?.role;
      const answer = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(last === "tool" ? done : toolCall);
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A throw-away project (one agent `main`, the model `fake` at `url`) loaded
 * as the gateway would load it; `remove` deletes it.
 */
export function benchProject(url: string, defaults: Record<string, unknown> = {}, prompt = "You are a benchmark."): { loaded: LoadedConfig; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "picoclaw-bench-"));
  mkdirSync(path.join(dir, "agents", "main"), { recursive: true });
  writeFileSync(path.join(dir, "agents", "main", "AGENT.md"), `---\nname: Bench\n---\n${prompt}`);
  writeFileSync(
    path.join(dir, "picoclaw.config.json"),
    JSON.stringify({
      agents: { defaults: { model_name: "fake", ...defaults } },
      model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: url }],
    }),
  );
  return { loaded: loadConfig({ env: {}, cwd: dir }), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
