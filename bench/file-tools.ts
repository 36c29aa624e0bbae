import { writeFileSync } from "node:fs";
import path from "node:path";
import { ensureBuilt } from "./memory.js";
import { Client, type Proc, ROOT, cpuMs, gatewayProject, startServer } from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * A file-tool turn against the same turn with the cheapest tool there is, in
 * the same run, measured as a user runs it: three gateway processes (`node
 * dist/main.js gateway`, sessions on disk, the default config but for the
 * model and `todo` switched on), each with a fake model process of its own
 * (bench/procs/fake-model.mjs) calling `todo read` (the baseline),
 * `read_file` (a 4 KiB file of the workspace) or `write_file` (4 KiB,
 * overwriting). Turns interleaved, each in a fresh session. The difference
 * of the p50s is the file tool's own cost: the workspace's checks, the
 * open, the read, or the atomic write with its fsyncs. Target: read_file
 * under 2 ms beyond the baseline.
 */

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const WARMUP = 30;
const PROCS = path.join(ROOT, "bench", "procs");

interface Gateway {
  client: Client;
  pid: number;
  turn(): Promise<void>;
  close(): Promise<void>;
}

async function gatewayCalling(name: string, tool: string, args: unknown): Promise<Gateway> {
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], {
    cwd: ROOT,
    env: { FAKE_TOOL: tool, FAKE_ARGS: JSON.stringify(args) },
  });
  const folder = gatewayProject(`files-${name}`, {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: model.url }],
    tools: { todo: { enabled: true } },
  });
  let gateway: (Proc & { url: string }) | undefined;
  try {
    gateway = await startServer(process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], {
      cwd: folder.dir,
      env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    });
  } catch (err) {
    await model.stop();
    folder.remove();
    throw err;
  }
  // The workspace is made at start (agents.defaults.workspace, "workspace" beside the config).
  writeFileSync(path.join(folder.dir, "workspace", "page.txt"), "line of text\n".repeat(315));
  const client = new Client(gateway.url, 2);
  let session = 0;
  const started = gateway;
  return {
    client,
    pid: started.child.pid!,
    turn: () => client.chat("go", `${name}${++session}`),
    close: async () => {
      client.close();
      await started.stop();
      await model.stop();
      folder.remove();
    },
  };
}

export async function benchFileTools(): Promise<Record<string, number>> {
  ensureBuilt();
  const gateways = {
    baseline: await gatewayCalling("baseline", "todo", { action: "read" }),
    read: await gatewayCalling("read", "read_file", { path: "page.txt" }),
    write: await gatewayCalling("write", "write_file", { path: "out.txt", content: "x".repeat(4096), overwrite: true }),
  };
  const kinds = Object.keys(gateways) as (keyof typeof gateways)[];
  try {
    for (let i = 0; i < WARMUP; i++) for (const k of kinds) await gateways[k].turn();
    const times = { baseline: [] as number[], read: [] as number[], write: [] as number[] };
    const cpuBefore = Object.fromEntries(kinds.map((k) => [k, cpuMs(gateways[k].pid)]));
    for (let i = 0; i < TURNS; i++) {
      for (const k of kinds.map((_, j) => kinds[(i + j) % kinds.length]!)) {
        const began = performance.now();
        await gateways[k].turn();
        times[k].push(performance.now() - began);
      }
    }
    const cpu = (k: keyof typeof gateways) => (cpuMs(gateways[k].pid) - cpuBefore[k]!) / TURNS;
    const p50 = (k: keyof typeof gateways) => percentile(times[k], 50);
    const result = {
      turns: TURNS,
      baselineP50: p50("baseline"),
      readP50: p50("read"),
      readAdded: p50("read") - p50("baseline"),
      readRatio: p50("read") / p50("baseline"),
      writeP50: p50("write"),
      writeAdded: p50("write") - p50("baseline"),
      writeRatio: p50("write") / p50("baseline"),
      baselineCpuMs: cpu("baseline"),
      readCpuMs: cpu("read"),
      writeCpuMs: cpu("write"),
    };
    report("file tools: read_file / write_file turns vs a `todo read` turn (gateway processes, fake model processes)", [
      ["turns each (interleaved)", String(TURNS)],
      ["baseline (todo read) turn p50 (ms)", `${fmt(result.baselineP50, 3)}, CPU ${fmt(result.baselineCpuMs, 3)} ms/turn`],
      [
        "read_file (4 KiB) turn p50 (ms)",
        `${fmt(result.readP50, 3)}: +${fmt(result.readAdded, 3)}, ${fmt(result.readRatio, 2)}× (target < +2 ms); CPU ${fmt(result.readCpuMs, 3)} ms/turn`,
      ],
      [
        "write_file (4 KiB, atomic, synced) turn p50 (ms)",
        `${fmt(result.writeP50, 3)}: +${fmt(result.writeAdded, 3)}, ${fmt(result.writeRatio, 2)}× (fsyncs included); CPU ${fmt(result.writeCpuMs, 3)} ms/turn`,
      ],
    ]);
    return result;
  } finally {
    await Promise.all(kinds.map((k) => gateways[k].close()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFileTools();
