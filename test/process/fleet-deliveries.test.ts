/**
 * Two real gateway processes (`node dist/main.js gateway`) on one Postgres
 * database (a throwaway cluster): what one publishes reaches the streams
 * the other holds, a delivery nobody saw waits in the database for the
 * next stream on any gateway, `/stop` reaches the gateway that runs the
 * turn, and the database restarting leaves both listening again.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { type Cluster, postgresTests, useCluster } from "../support/postgres.js";
import { call, openGate, useScriptedModel } from "../support/scripted-openai.js";
import { type SseEvent, sseReader } from "../support/sse.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tests = postgresTests();
let cluster: Cluster;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

interface Gateway {
  child: ChildProcess;
  output: { text: string };
  url: string;
}

async function gateway(project: string, databaseUrl: string): Promise<Gateway> {
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info", DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const output = { text: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  await eventually(() => expect(output.text).toMatch(/listening on http:\/\/\S+/));
  return { child, output, url: /listening on (http:\/\/\S+)/.exec(output.text)![1]! };
}

const chat = async (url: string, message: string, session: string) => {
  const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });
  return { status: res.status, json: await jsonOf(res) };
};
const events = async (url: string, session: string, lastEventId?: string) =>
  sseReader(await fetch(`${url}/v1/sessions/agent:main:http:${session}/events`, lastEventId ? { headers: { "last-event-id": lastEventId } } : {}));
const historyOf = async (url: string, session: string) =>
  (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:${session}/history`))).messages as { role: string; content: string }[];
const spawnThen = (task: string, label: string) => [call("spawn", { task, label }), "SAY started it"].join("\n");
const deliveries = (seen: readonly SseEvent[]) => seen.filter((e) => e.event === "delivery").map((e) => e.data.text as string);

describe.runIf(tests.run)("deliveries and /stop across gateways on one Postgres database", () => {
  const model = useScriptedModel();
  useCluster(tests.found, (started) => {
    cluster = started;
  });

  async function fleet() {
    const url = await cluster.database();
    const config = { ...openaiConfig(model.server.url, { stream: false }), session: { store: "postgres", postgres: { url: "${DATABASE_URL}" } } };
    const [a, b] = [await gateway(writeProject({ config }), url), await gateway(writeProject({ config }), url)];
    return { url, a, b };
  }

  /** Events of the stream until a delivery with this text (and that one). */
  const untilDelivery = async (stream: Awaited<ReturnType<typeof events>>, text: string) => {
    const seen: SseEvent[] = [];
    for (;;) {
      const event = await stream.next();
      seen.push(event);
      if (event.event === "delivery" && event.data.text === text) return seen;
    }
  };

  it("a spawned subagent started through A delivers to a stream held on B; the result is in the history, and shown once", { timeout: 120_000 }, async () => {
    const { a, b } = await fleet();
    const stream = await events(b.url, "bg");
    const started = await chat(a.url, spawnThen("WAIT fleet-bg\nSAY the background answer", "bg"), "bg");
    expect(started.json.reply).toBe("started it");
    openGate("fleet-bg");
    const seen = await within("the result on B's stream", untilDelivery(stream, "the background answer"));
    expect(seen.map((e) => e.event)).toContain("subagent.start");
    expect(deliveries(seen)).toEqual(["started it", "the background answer"]);
    // Every event carries its row's id, growing.
    const ids = stream.ids.map((id) => BigInt(id!));
    expect(ids).toEqual([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    // The parent's answer to the result is stored with the system note it answered, readable on either gateway.
    await eventually(async () => expect((await historyOf(a.url, "bg")).at(-1)).toEqual({ role: "assistant", content: "the background answer" }));
    const note = (await historyOf(b.url, "bg")).findLast((m) => m.role === "user")!.content;
    expect(note).toMatch(/^\[System note: background subagent "bg"/);
    // B's stream showed it: no chat response on either gateway hands it out again.
    expect((await chat(a.url, "SAY next", "bg")).json.delivered).toEqual([{ from: "agent", text: "next" }]);
    await stream.close();
  });

  it("a delivery made while no stream is open anywhere is handed to the next stream opened on the other gateway, once", { timeout: 120_000 }, async () => {
    const { a, b } = await fleet();
    expect((await chat(a.url, spawnThen("SAY kept for later", "later"), "later")).json.reply).toBe("started it");
    await eventually(async () => expect((await historyOf(a.url, "later")).at(-1)?.content).toBe("kept for later"));
    const onB = await events(b.url, "later");
    expect(await onB.next()).toEqual({ event: "delivery", data: { from: "agent", text: "kept for later" } });
    // Once: a stream opened on A afterwards, and the next chat response, do not get it again.
    const onA = await events(a.url, "later");
    const next = await chat(a.url, "SAY and now", "later");
    expect(next.json.delivered).toEqual([{ from: "agent", text: "and now" }]);
    expect(deliveries(await untilDelivery(onA, "and now"))).toEqual(["and now"]);
    await onA.close();
    await onB.close();
  });

  it("/stop sent to B stops a turn running on A; with nothing running anywhere, it says so", { timeout: 120_000 }, async () => {
    const { a, b } = await fleet();
    const before = model.server.requests.length;
    const running = chat(a.url, "SAY never\nWAIT fleet-stop-never", "stopme");
    await eventually(() => expect(model.server.requests.length).toBe(before + 1));
    const stopped = await chat(b.url, "/stop", "stopme");
    expect(stopped.json.reply).toBe("Stopped.");
    const answer = await within("A's stopped turn", running);
    expect(answer.status).toBe(200);
    expect(answer.json.stopped).toBe(true);
    expect((await chat(b.url, "/stop", "stopme")).json.reply).toBe("Nothing was running.");
    expect((await chat(a.url, "SAY still works", "stopme")).json.reply).toBe("still works");
    expect((await historyOf(b.url, "stopme")).map((m) => m.content)).toEqual(["SAY still works", "still works"]);
  });

  it("the database restarting does not stop either gateway listening: deliveries from A reach B's stream again after", { timeout: 180_000 }, async () => {
    const { a, b } = await fleet();
    const stream = await events(b.url, "restart");
    expect((await chat(a.url, "SAY before", "restart")).status).toBe(200);
    await within("B's stream before the restart", untilDelivery(stream, "before"));
    await cluster.stop();
    await cluster.start();
    for (const g of [a, b]) {
      await eventually(() => expect(g.output.text).toContain("the session database's notification connection is back"), { ms: 60_000 });
      await eventually(async () => expect((await fetch(`${g.url}/ready`)).status).toBe(200));
    }
    expect(b.child.exitCode).toBeNull();
    await eventually(async () => expect((await chat(a.url, spawnThen("SAY after the restart", "again"), "restart")).status).toBe(200));
    await within("the spawned result on B's stream after the restart", untilDelivery(stream, "after the restart"));
    await stream.close();
  });

  it("a stream that comes back to the other gateway with its Last-Event-ID gets what it missed there", { timeout: 120_000 }, async () => {
    const { a, b } = await fleet();
    const first = await events(b.url, "resume");
    await chat(a.url, "SAY one", "resume");
    await untilDelivery(first, "one");
    await first.until("turn.end");
    const last = first.lastId!;
    await first.close();
    await chat(a.url, "SAY two", "resume");
    const back = await events(a.url, "resume", last);
    const seen = await within("the missed events on A", untilDelivery(back, "two"));
    expect(seen.map((e) => e.event)).toEqual(["turn.start", "delivery"]);
    await back.close();
  });
});
