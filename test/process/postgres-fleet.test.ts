/**
 * Real gateway processes (`node dist/main.js gateway`) on one Postgres
 * database (a throwaway cluster, test/support/postgres.ts): what one writes
 * the other reads, turns of one session sent to both at once run one after
 * the other, a gateway killed mid-turn loses only that turn while the other
 * goes on, and the database stopping gives clear 503s, then recovery.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { askedFor } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { type Cluster, postgresTests, useCluster } from "../support/postgres.js";
import { openGate, useScriptedModel } from "../support/scripted-openai.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tests = postgresTests();
const PASSWORD = "s3cret-db-pass";
let cluster: Cluster;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

interface Gateway {
  child: ChildProcess;
  output: { text: string };
  exited: Promise<number | null>;
  url: string;
}

/** A gateway process on its own project folder, its store the database `databaseUrl` (given as ${DATABASE_URL}). */
async function gateway(project: string, databaseUrl: string, args = ["gateway"], listen = args[0] === "gateway"): Promise<Gateway> {
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), ...args], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info", DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const output = { text: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  if (!listen) return { child, output, exited, url: "" };
  await eventually(() => expect(output.text).toMatch(/listening on http:\/\/\S+/));
  return { child, output, exited, url: /listening on (http:\/\/\S+)/.exec(output.text)![1]! };
}

const chat = async (url: string, message: string, session = "shared") => {
  const res = await fetch(`${url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, session }),
  });
  return { status: res.status, json: await jsonOf(res) };
};
const history = async (url: string, session = "shared") =>
  (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:${session}/history`))).messages as { role: string; content: string }[];
/** Waits until a turn waits in the database for its session's lock (another gateway's turn holds it). */
async function waitingForLock(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await eventually(async () => {
      const { rows } = await client.query("SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      expect(rows.map((row) => row.query)).toEqual([expect.stringContaining("pg_advisory_lock")]);
    });
  } finally {
    await client.end();
  }
}

describe.runIf(tests.run)("gateways sharing one Postgres database", () => {
  const model = useScriptedModel();
  useCluster(tests.found, (started) => {
    cluster = started;
  });

  /** Two projects with the same config: store postgres at ${DATABASE_URL}, the scripted model; write_file asks a person first. */
  async function fleet() {
    const url = (await cluster.database()).replace("postgres@", `postgres:${PASSWORD}@`);
    const config = {
      ...openaiConfig(model.server.url, { stream: false }),
      session: { store: "postgres", postgres: { url: "${DATABASE_URL}" } },
      tools: { write_file: { approval: "ask" } },
    };
    return { url, projects: [writeProject({ config }), writeProject({ config })] as const };
  }

  it("a history written through gateway A is read through gateway B, and B's turn carries on from it", { timeout: 120_000 }, async () => {
    const { url, projects } = await fleet();
    const a = await gateway(projects[0], url);
    const b = await gateway(projects[1], url);
    expect((await chat(a.url, "SAY hello from A")).status).toBe(200);
    expect((await history(b.url)).map((m) => m.content)).toEqual(["SAY hello from A", "hello from A"]);
    expect((await chat(b.url, "SAY hello from B")).status).toBe(200);
    const request = model.server.requests.at(-1)!;
    expect((request.body.messages as { content: string }[]).map((m) => m.content)).toContain("hello from A");
    expect((await history(a.url)).map((m) => m.content)).toEqual(["SAY hello from A", "hello from A", "SAY hello from B", "hello from B"]);
    const listed = (await jsonOf(await fetch(`${a.url}/v1/sessions`))).sessions;
    expect(listed.map((s: { key: string; messages: number }) => [s.key, s.messages])).toEqual([["agent:main:http:shared", 4]]);
    expect((await fetch(`${b.url}/ready`)).status).toBe(200);
    // The connection string's password is a secret: never in the log.
    for (const g of [a, b]) expect(g.output.text).not.toContain(PASSWORD);
  });

  it("an approval waiting on gateway A survives gateway B's start (A's turn holds the session); one left by a killed gateway is denied by the next start", {
    timeout: 120_000,
  }, async () => {
    const { url, projects } = await fleet();
    const approvals = async (g: Gateway, session: string) =>
      (await jsonOf(await fetch(`${g.url}/v1/sessions/agent:main:http:${session}/approvals`))).approvals as { id: string; tool: string }[];
    const a = await gateway(projects[0], url);
    const waiting = chat(a.url, 'CALL write_file {"path":"a.txt","content":"from A"}\nSAY ran it', "asks");
    await eventually(async () => expect((await approvals(a, "asks")).map((r) => r.tool)).toEqual(["write_file"]));
    const b = await gateway(projects[1], url);
    // B started (and looked for requests left waiting): A's is still A's, still waiting.
    expect(b.output.text).not.toContain("left waiting by the last run");
    const [request] = await approvals(a, "asks");
    const decided = await fetch(`${a.url}/v1/sessions/agent:main:http:asks/approvals/${request!.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "allow" }),
    });
    expect(decided.status).toBe(200);
    expect((await within("A's turn", waiting)).json.reply).toBe("ran it");

    // B's own request, then B killed: nobody waits on it any more, and the next gateway to start denies it.
    void chat(b.url, 'CALL write_file {"path":"b.txt","content":"from B"}\nSAY never', "orphan").catch(() => {});
    await eventually(async () => expect((await approvals(b, "orphan")).length).toBe(1));
    b.child.kill("SIGKILL");
    await b.exited;
    const c = await gateway(projects[1], url);
    await eventually(() => expect(c.output.text).toContain("1 approval request was left waiting by the last run: denied"));
    expect(await approvals(c, "orphan")).toEqual([]);
  });

  it("two turns of one session sent to A and B at once run one after the other, never interleaved", { timeout: 120_000 }, async () => {
    const { url, projects } = await fleet();
    const a = await gateway(projects[0], url);
    const b = await gateway(projects[1], url);
    const before = model.server.requests.length;
    const first = chat(a.url, "SAY first\nWAIT fleet-order");
    await eventually(() => expect(model.server.requests.slice(before).map(askedFor)).toEqual(["SAY first\nWAIT fleet-order"]));
    const second = chat(b.url, "SAY second");
    // B's turn waits for the session's lock, which A's turn holds: it has not reached the model.
    await waitingForLock(url);
    expect(model.server.requests.length).toBe(before + 1);
    openGate("fleet-order");
    expect((await within("A's turn", first)).status).toBe(200);
    expect((await within("B's turn", second)).status).toBe(200);
    // B's turn ran after A's had ended: its model call saw A's whole exchange.
    const seen = model.server.requests.slice(before);
    expect(seen.map(askedFor)).toEqual(["SAY first\nWAIT fleet-order", "SAY second"]);
    expect((seen[1]!.body.messages as { content: string }[]).map((m) => m.content)).toContain("first");
    expect((await history(a.url)).map((m) => m.content)).toEqual(["SAY first\nWAIT fleet-order", "first", "SAY second", "second"]);
  });

  it("SIGKILL of A mid-turn loses only that turn: B's waiting turn on the session runs, and every completed turn is kept once", {
    timeout: 120_000,
  }, async () => {
    const { url, projects } = await fleet();
    const a = await gateway(projects[0], url);
    const b = await gateway(projects[1], url);
    expect((await chat(a.url, "SAY kept")).status).toBe(200);
    const before = model.server.requests.length;
    const lost = chat(a.url, "SAY lost\nWAIT fleet-never").catch(() => "cut off");
    await eventually(() => expect(model.server.requests.slice(before).map(askedFor)).toEqual(["SAY lost\nWAIT fleet-never"]));
    // B's turn waits for the session, which A's turn holds.
    const waiting = chat(b.url, "SAY after the crash");
    await waitingForLock(url);
    a.child.kill("SIGKILL");
    expect(await within("A to die of SIGKILL", a.exited)).toBeNull();
    expect(await within("A's request to be cut off", lost)).toBe("cut off");
    const answered = await within("B's turn once A's lock went with its connection", waiting);
    expect(answered.status).toBe(200);
    expect(answered.json.reply).toBe("after the crash");
    expect((await history(b.url)).map((m) => m.content)).toEqual(["SAY kept", "kept", "SAY after the crash", "after the crash"]);
  });

  it("the database stopping mid-run: 503 store_unavailable and /ready 503, no crash; once it is back, the gateway answers again", {
    timeout: 180_000,
  }, async () => {
    const { url, projects } = await fleet();
    const b = await gateway(projects[1], url);
    expect((await chat(b.url, "SAY before")).status).toBe(200);
    await cluster.stop();
    try {
      const ready = await fetch(`${b.url}/ready`);
      expect(ready.status).toBe(503);
      expect(await jsonOf(ready)).toEqual({
        status: "unavailable",
        error: { code: "store_unavailable", message: "the session store does not answer; the gateway's log says why" },
      });
      const failed = await chat(b.url, "SAY during");
      expect(failed.status).toBe(503);
      expect(failed.json.error.code).toBe("store_unavailable");
      expect(failed.json.error.message).toContain("the session database is not reachable");
      expect((await fetch(`${b.url}/v1/sessions`)).status).toBe(503);
      expect((await fetch(`${b.url}/health`)).status).toBe(200);
      expect(b.child.exitCode).toBeNull();
    } finally {
      await cluster.start();
    }
    await eventually(async () => expect((await fetch(`${b.url}/ready`)).status).toBe(200));
    expect((await chat(b.url, "SAY after")).status).toBe(200);
    expect((await history(b.url)).map((m) => m.content)).toEqual(["SAY before", "before", "SAY after", "after"]);
    expect(b.output.text).toContain("GET /ready: 503, the session store does not answer");
    expect(b.output.text).not.toContain(PASSWORD);
    b.child.kill("SIGTERM");
    expect(await within("B to stop on SIGTERM", b.exited)).toBe(0);
  });

  it("a gateway whose database cannot be reached does not start: it says why, without the password", { timeout: 120_000 }, async () => {
    const project = writeProject({ config: { session: { store: "postgres", postgres: { url: "${DATABASE_URL}" } } } });
    const g = await gateway(project, `postgresql://postgres:${PASSWORD}@127.0.0.1:1/none`, ["gateway"], false);
    expect(await within("the gateway to exit", g.exited)).toBe(1);
    expect(g.output.text).toContain("picoclaw: store_unavailable: the session database is not reachable (reaching it and migrating its schema)");
    expect(g.output.text).not.toContain("listening");
    expect(g.output.text).not.toContain(PASSWORD);
  });

  it("config check masks the connection string's password", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: { session: { store: "postgres", postgres: { url: "${DATABASE_URL}" } } } });
    const check = await gateway(project, `postgresql://postgres:${PASSWORD}@db.example:5432/bot`, ["config", "check"]);
    expect(await within("config check", check.exited)).toBe(0);
    expect(check.output.text).toContain('"store": "postgres"');
    expect(check.output.text).not.toContain(PASSWORD);
  });
});
