import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeModelServer, type RecordedRequest, type Reply, textCompletion, toolCallCompletion } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

/** The real gateway process and its session folder: a crash (kill -9) mid-turn, a restart, a second gateway (README, "Sessions on disk"). */

const root = path.resolve(import.meta.dirname, "..", "..");
const children: ChildProcess[] = [];
const servers: FakeModelServer[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const server of servers.splice(0)) await server.close();
});

interface Gateway {
  child: ChildProcess;
  output: { text: string };
  exited: Promise<number | null>;
}

function startGateway(project: string): Gateway {
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const output = { text: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output, exited };
}

async function listening(gateway: Gateway): Promise<string> {
  await eventually(() => expect(gateway.output.text).toMatch(/listening on http:\/\/\S+/));
  return /listening on (http:\/\/\S+)/.exec(gateway.output.text)![1]!;
}

const chat = async (url: string, message: string) => {
  const res = await fetch(`${url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, session: "crash" }),
  });
  return { status: res.status, json: await jsonOf(res) };
};
const history = async (url: string) =>
  (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:crash/history`))).messages as { role: string; content: string }[];

/** A model that answers "ok: <message>", except a message starting with "hang": a tool call, then no answer at all. */
function model(request: RecordedRequest): Reply | Promise<Reply> {
  const messages = request.body.messages as { role: string; content: string }[];
  const last = messages.at(-1)!;
  const user = messages.findLast((m) => m.role === "user")!.content;
  if (!user.startsWith("hang")) return textCompletion(`ok: ${user}`);
  if (last.role === "user") return toolCallCompletion([{ name: "todo", args: { action: "write", todos: [{ id: "1", content: "half done" }] } }]);
  return new Promise<Reply>(() => {});
}

describe("the session folder of the real gateway process", () => {
  it("a lock left by a gateway that is a zombie now (killed, not yet reaped by its parent) does not keep the next one from starting", async () => {
    const project = writeProject({ config: { session: { store: "jsonl" } } });
    // A process that is a zombie while the test runs: sh's background child, which the sleep sh becomes never reaps.
    // It ends a second later, once sh has become that sleep: one that ended before the exec could be reaped by sh.
    const holder = spawn("sh", ["-c", "sleep 1 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    children.push(holder);
    const zombie = Number(
      (await within("the zombie's pid", new Promise<string>((resolve) => holder.stdout!.once("data", (d: Buffer) => resolve(d.toString()))))).trim(),
    );
    await eventually(() => expect(readFileSync(`/proc/${zombie}/stat`, "utf8")).toMatch(/\) Z /));
    // What the gateway killed there had written: its pid, and (as every gateway now writes) its start and boot.
    const stat = readFileSync(`/proc/${zombie}/stat`, "utf8");
    const lock = {
      pid: zombie,
      host: hostname(),
      started_at: "a moment ago",
      start_ticks: stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19],
      boot_id: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
    };
    mkdirSync(path.join(project, "sessions"), { recursive: true });
    writeFileSync(path.join(project, "sessions", "picoclaw.lock"), JSON.stringify(lock));
    const gateway = startGateway(project);
    const url = await listening(gateway);
    expect((await chat(url, "hello")).status).toBe(200);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
  });

  it("kill -9 in the middle of a turn, then a restart: every completed turn is there exactly once, and the next turn works", { timeout: 120_000 }, async () => {
    const server = await FakeModelServer.start(model);
    servers.push(server);
    const project = writeProject({ config: { ...openaiConfig(server.url, { stream: false }), tools: { todo: { enabled: true } } } });
    const first = startGateway(project);
    const url = await listening(first);
    expect((await chat(url, "one")).status).toBe(200);
    expect((await chat(url, "two")).status).toBe(200);
    const hanging = fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hang here", session: "crash" }),
    }).catch(() => "cut off");
    // The turn is in its second model call: its tool already ran.
    await eventually(() => expect(server.requests.length).toBe(4));
    first.child.kill("SIGKILL");
    expect(await within("the first gateway to die of SIGKILL", first.exited)).toBeNull();
    expect(await within("the hanging turn's request to be cut off", hanging)).toBe("cut off");

    const second = startGateway(project);
    const again = await listening(second);
    const kept = await history(again);
    expect(kept.map((m) => `${m.role}: ${m.content}`)).toEqual(["user: one", "assistant: ok: one", "user: two", "assistant: ok: two"]);
    const next = await chat(again, "three");
    expect(next.status).toBe(200);
    expect(next.json.reply).toBe("ok: three");
    expect((await history(again)).map((m) => m.content)).toEqual(["one", "ok: one", "two", "ok: two", "three", "ok: three"]);
    second.child.kill("SIGTERM");
    expect(await within("the restarted gateway to exit on SIGTERM", second.exited)).toBe(0);
  });

  it("a second gateway on the same folder refuses to start (exit 2), naming the folder and the owner", { timeout: 120_000 }, async () => {
    const project = writeProject({ config: {} });
    const first = startGateway(project);
    await listening(first);
    const second = startGateway(project);
    expect(await within("the second gateway to exit, refused", second.exited)).toBe(2);
    expect(second.output.text).toContain(
      `picoclaw: sessions_locked: the session folder ${path.join(project, "sessions")} is in use: another gateway (process ${first.child.pid} on `,
    );
    expect(second.output.text).not.toContain("listening");
    // The first one is unaffected, and once it is gone the folder is free.
    first.child.kill("SIGTERM");
    expect(await within("the first gateway to exit on SIGTERM", first.exited)).toBe(0);
    const third = startGateway(project);
    await listening(third);
    third.child.kill("SIGTERM");
    expect(await within("the third gateway to exit on SIGTERM", third.exited)).toBe(0);
  });

  const approvals = async (url: string) => (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:crash/approvals`))).approvals as { id: string }[];
  const records = async (url: string) =>
    ((await history(url)) as { role: string; content: string; record?: { decision: string; by: string; id: string } }[]).filter((m) => m.record);
  const execCall = () =>
    fetch(`${url0()}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: 'CALL exec {"action":"run","command":"touch ran"}', session: "crash" }),
    }).catch(() => "cut off");
  let current = "";
  const url0 = () => current;

  it("a gateway killed while an approval waits: the restart denies it, says so in the history, and a late decision is 409", { timeout: 120_000 }, async () => {
    const project = writeProject({ config: {} });
    const first = startGateway(project);
    current = await listening(first);
    void execCall();
    const [waiting] = await eventually(async () => {
      const found = await approvals(current);
      expect(found).toHaveLength(1);
      return found;
    });
    first.child.kill("SIGKILL");
    await first.exited;
    const second = startGateway(project);
    current = await listening(second);
    const kept = await eventually(async () => {
      const found = await records(current);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(kept[0]!.record).toMatchObject({ id: waiting!.id, decision: "deny", by: "restart" });
    expect(kept[0]!.content).toMatch(/the gateway restarted while the request waited/);
    expect(await approvals(current)).toEqual([]);
    const late = await fetch(`${current}/v1/sessions/agent:main:http:crash/approvals/${waiting!.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "allow" }),
    });
    expect(late.status).toBe(409);
    second.child.kill("SIGTERM");
    expect(await within("the restarted gateway to exit on SIGTERM", second.exited)).toBe(0);
  });

  it("SIGTERM while an approval waits: shutdown denies it and records that, and nothing ran", { timeout: 120_000 }, async () => {
    const project = writeProject({ config: {} });
    const first = startGateway(project);
    current = await listening(first);
    const answer = execCall();
    await eventually(async () => expect(await approvals(current)).toHaveLength(1));
    first.child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", first.exited)).toBe(0);
    await answer;
    const second = startGateway(project);
    current = await listening(second);
    const kept = await records(current);
    expect(kept.map((m) => [m.record!.decision, m.record!.by])).toEqual([["deny", "shutdown"]]);
    expect(existsSync(path.join(project, "workspace", "ran"))).toBe(false);
    second.child.kill("SIGTERM");
    await second.exited;
  });
});
