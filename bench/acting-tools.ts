import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { tmpdir } from "node:os";
import { bwrapArgs, findBwrap } from "../src/features/exec/sandbox.js";
import { ensureBuilt } from "./memory.js";
import { Client, type Proc, ROOT, cpuMs, gatewayProject, startServer } from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * Turns of the tools that act against the same turn with the cheapest tool
 * there is, in the same run, measured as a user runs it: gateway processes
 * (`node dist/main.js gateway`, sessions on disk, the default config but
 * for the model, `todo` and `exec` switched on), each with a fake model
 * process of its own (bench/procs/fake-model.mjs) calling `todo read` (the
 * baseline), `read_file` (a 4 KiB file of the workspace), `write_file`
 * (4 KiB, overwriting), `exec` of `true`, and `exec` of `true` under
 * bubblewrap (when bwrap is installed), and `exec` under approval "ask"
 * with an API client that allows each request as soon as it is listed
 * (what asking costs besides a person's wait). Turns interleaved, each in a fresh
 * session. The difference of the p50s is the tool's cost; for exec, the
 * process it starts is measured on its own in the same run (`sh -c true`,
 * and bwrap around it, spawned from this process to their exit), and what
 * remains is exec's own work: the parse and the guard, the folder opened,
 * the output, the sweep for what the command left running. Targets: read_file
 * and exec's own work each under 2 ms.
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

async function gatewayCalling(name: string, tool: string, args: unknown, exec: Record<string, unknown> = {}): Promise<Gateway> {
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], {
    cwd: ROOT,
    env: { FAKE_TOOL: tool, FAKE_ARGS: JSON.stringify(args) },
  });
  const folder = gatewayProject(`files-${name}`, {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: model.url }],
    // approval "allow" unless the variant says otherwise: the tool's cost, not a person's wait.
    tools: { todo: { enabled: true }, exec: { enabled: true, approval: "allow", ...exec } },
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
    turn: async () => {
      const id = `${name}${++session}`;
      if (exec.approval !== "ask") return client.chat("go", id);
      // An API client that allows each request as soon as it is listed (polled): the price of asking, without a person's wait.
      const answered = client.chat("go", id);
      const key = `/v1/sessions/agent:main:http:${id}/approvals`;
      for (;;) {
        const listed = JSON.parse((await client.call("GET", key)).body) as { approvals: { id: string }[] };
        if (listed.approvals.length > 0) {
          await client.call("POST", `${key}/${listed.approvals[0]!.id}`, { decision: "allow" });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await answered;
    },
    close: async () => {
      client.close();
      await started.stop();
      await model.stop();
      folder.remove();
    },
  };
}

/** From spawning `argv` (stdin closed, stdout and stderr piped, its own process group: as exec starts it) to its exit and the pipes' close, `times` times; the p50 in ms. */
async function spawnP50(argv: readonly [string, ...string[]], times: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const began = performance.now();
    await new Promise<void>((done, fail) => {
      const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], detached: true });
      child.stdout.resume();
      child.stderr.resume();
      child.once("error", fail);
      child.once("close", () => done());
    });
    samples.push(performance.now() - began);
  }
  return percentile(samples, 50);
}

export async function benchActingTools(): Promise<Record<string, number>> {
  ensureBuilt();
  const bwrap = findBwrap(process.env.PATH);
  const gateways: Record<string, Gateway> = {
    baseline: await gatewayCalling("baseline", "todo", { action: "read" }),
    read: await gatewayCalling("read", "read_file", { path: "page.txt" }),
    write: await gatewayCalling("write", "write_file", { path: "out.txt", content: "x".repeat(4096), overwrite: true }),
    exec: await gatewayCalling("exec", "exec", { action: "run", command: "true" }),
    execAsk: await gatewayCalling("ask", "exec", { action: "run", command: "true" }, { approval: "ask" }),
    ...(bwrap ? { execBwrap: await gatewayCalling("bwrap", "exec", { action: "run", command: "true" }, { sandbox: "bwrap" }) } : {}),
  };
  const kinds = Object.keys(gateways);
  try {
    for (let i = 0; i < WARMUP; i++) for (const k of kinds) await gateways[k]!.turn();
    const times: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
    const cpuBefore = Object.fromEntries(kinds.map((k) => [k, cpuMs(gateways[k]!.pid)]));
    for (let i = 0; i < TURNS; i++) {
      for (const k of kinds.map((_, j) => kinds[(i + j) % kinds.length]!)) {
        const began = performance.now();
        await gateways[k]!.turn();
        times[k]!.push(performance.now() - began);
      }
    }
    const cpu = (k: string) => (cpuMs(gateways[k]!.pid) - cpuBefore[k]!) / TURNS;
    const p50 = (k: string) => percentile(times[k]!, 50);
    // The processes exec starts, on their own (the same arguments the tool gives them).
    const shSpawn = await spawnP50(["sh", "-c", "true"], TURNS);
    const bwrapSpawn = bwrap
      ? await spawnP50(bwrapArgs(bwrap, { root: tmpdir(), cwd: tmpdir(), network: false, readPaths: [] }, ["sh", "-c", "true"]), TURNS)
      : Number.NaN;
    const base = p50("baseline");
    const result = {
      turns: TURNS,
      baselineP50: base,
      readAdded: p50("read") - base,
      writeAdded: p50("write") - base,
      execAdded: p50("exec") - base,
      shSpawnP50: shSpawn,
      execOwn: p50("exec") - base - shSpawn,
      askAdded: p50("execAsk") - p50("exec"),
      execBwrapAdded: bwrap ? p50("execBwrap") - base : Number.NaN,
      bwrapSpawnP50: bwrapSpawn,
      execBwrapOwn: bwrap ? p50("execBwrap") - base - bwrapSpawn : Number.NaN,
    };
    const row = (k: string, label: string, extra = ""): [string, string] => [
      label,
      `${fmt(p50(k), 3)}: +${fmt(p50(k) - base, 3)}, ${fmt(p50(k) / base, 2)}×${extra}; CPU ${fmt(cpu(k), 3)} ms/turn`,
    ];
    report("tools that act: read_file, write_file, exec turns vs a `todo read` turn (gateway processes, fake model processes)", [
      ["turns each (interleaved)", String(TURNS)],
      row("baseline", "baseline (todo read) turn p50 (ms)"),
      row("read", "read_file (4 KiB) turn p50 (ms)", " (target < +2 ms)"),
      row("write", "write_file (4 KiB, atomic, synced) turn p50 (ms)", " (fsyncs included)"),
      row("exec", "exec `true` turn p50 (ms)"),
      ["  sh -c true spawned alone, p50 (ms)", fmt(shSpawn, 3)],
      ["  exec's own work (added − spawn) (ms)", `${fmt(result.execOwn, 3)} (target < 2)`],
      row("execAsk", "exec `true` under approval ask, allowed by a polling API client, turn p50 (ms)"),
      ["  asking (ask − allow): the request kept durably, listed, decided, recorded (ms)", fmt(result.askAdded, 3)],
      ...(bwrap
        ? [
            row("execBwrap", "exec `true` under bwrap turn p50 (ms)"),
            ["  bwrap … sh -c true spawned alone, p50 (ms)", fmt(bwrapSpawn, 3)] as [string, string],
            ["  exec's own work under bwrap (ms)", `${fmt(result.execBwrapOwn, 3)} (target < 2)`] as [string, string],
          ]
        : [["exec under bwrap", "skipped: no bwrap on PATH"] as [string, string]]),
    ]);
    return result;
  } finally {
    await Promise.all(kinds.map((k) => gateways[k]!.close()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchActingTools();
