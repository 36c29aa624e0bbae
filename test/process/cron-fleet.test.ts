/**
 * Scheduled jobs across a fleet: three real gateway processes on one
 * Postgres database (a throwaway cluster), each reading the jobs again
 * every second (cron.poll_seconds 1), so all three wake for every due run.
 * Each run happens once across them, counted in the sessions' histories
 * and in the model's calls: one-shot jobs (those added through a gateway
 * killed before they were due included) and a job repeating every 2 s.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { askedFor } from "../support/fake-openai.js";
import { type Cluster, postgresTests, useCluster } from "../support/postgres.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { useScriptedModel } from "../support/scripted-openai.js";
import { eventually, within } from "../support/wait.js";

const tests = postgresTests();
let cluster: Cluster;

interface Gateway {
  child: ReturnType<typeof picoclawProcess>["child"];
  exited: Promise<number | null>;
  url: string;
}

async function gateway(project: string): Promise<Gateway> {
  const { child, exited, output } = picoclawProcess(["gateway"], project);
  await eventually(() => expect(output()).toMatch(/listening on http:\/\/\S+/));
  return { child, exited, url: /listening on (http:\/\/\S+)/.exec(output())![1]! };
}

const userMessages = async (url: string, key: string) =>
  ((await jsonOf(await fetch(`${url}/v1/sessions/${key}/history`))).messages as { role: string; content: string }[])
    .filter((m) => m.role === "user")
    .map((m) => m.content);

/** The job id and due time a scheduled run's message names. */
const runOf = (text: string) => /^\[Scheduled job "[^"]*" \(id ([0-9a-f]+)\), due (\S+?)\]/.exec(text)?.slice(1, 3) as [string, string] | undefined;

describe.runIf(tests.run)("scheduled jobs across three gateways on one database", () => {
  const model = useScriptedModel();
  useCluster(tests.found, (started) => {
    cluster = started;
  });

  /** Three gateways on a new database, each with its own model key (the model's requests say which gateway ran a turn). */
  async function fleet() {
    const url = await cluster.database();
    const gateways = await Promise.all(
      ["gw-a", "gw-b", "gw-c"].map((key) =>
        gateway(
          writeProject({
            config: {
              ...openaiConfig(model.server.url, { stream: false, api_key: `sk-${key}` }),
              gateway: { port: 0 },
              session: { store: "postgres", postgres: { url } },
              cron: { poll_seconds: 1 },
            },
          }),
        ),
      ),
    );
    return { url, gateways };
  }

  /** Whether no gateway runs a turn now. */
  const idle = async (gateways: Gateway[]) => {
    for (const g of gateways) {
      if (g.child.exitCode !== null || g.child.signalCode !== null) continue;
      const { sessions } = await jsonOf(await fetch(`${g.url}/v1/status`));
      if (sessions.running_turns + sessions.queued_turns > 0) return false;
    }
    return true;
  };

  it("one-shot jobs run once each across the fleet, those added through a gateway killed before they were due too", { timeout: 90_000 }, async () => {
    const { gateways } = await fleet();
    const [a, b] = gateways as [Gateway, Gateway, Gateway];
    const add = async (g: Gateway, session: string, n: number, at: number) => {
      const res = await fetch(`${g.url}/v1/cron`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session_key: `agent:main:http:${session}`, message: `SAY ran ${session} ${n}`, at_seconds: at }),
      });
      expect(res.status).toBe(201);
      return (await jsonOf(res)).job.id as string;
    };
    const gone = () => eventually(async () => expect((await jsonOf(await fetch(`${b.url}/v1/cron`))).jobs).toEqual([]), { ms: 30_000 });
    // Three added through A, due 3 and 4 s out, and A killed at once: the others find them on the database and run them.
    const jobs: { id: string; key: string }[] = [];
    for (let n = 0; n < 3; n++) jobs.push({ id: await add(a, "left", n, 3 + (n % 2)), key: "agent:main:http:left" });
    a.child.kill("SIGKILL");
    expect(await within("A to die of SIGKILL", a.exited)).toBeNull();
    const alive = gateways.filter((g) => g !== a);
    // (Every one-shot ran and is gone: each was claimed, run and removed, so none can run again.)
    await gone();
    // Three through B: B and C both wake for them.
    for (let n = 0; n < 3; n++) jobs.push({ id: await add(b, "kept", n, 3 + (n % 2)), key: "agent:main:http:kept" });
    await gone();
    await eventually(async () => expect(await idle(alive)).toBe(true));
    for (const job of jobs) {
      const runs = (await userMessages(b.url, job.key)).filter((text) => runOf(text)?.[0] === job.id);
      expect(runs, job.id).toHaveLength(1);
      const calls = model.server.requests.filter((r) => runOf(askedFor(r))?.[0] === job.id);
      expect(calls, job.id).toHaveLength(1);
      // A's own jobs ran on a gateway that lived (A was gone before any was due).
      expect(calls[0]!.headers.authorization).not.toBe("Bearer sk-gw-a");
    }
    for (const g of alive) expect(g.child.exitCode).toBeNull();
  });

  it("a job due every 2 s, listed by all three gateways: each due run happens once across them", { timeout: 90_000 }, async () => {
    const { url, gateways } = await fleet();
    const [a, b] = gateways as [Gateway, Gateway, Gateway];
    // The job as the store keeps it, with an interval the tool would not take (at least 60 s): written to the database.
    const now = Date.now();
    const id = randomBytes(8).toString("hex");
    const key = "agent:main:http:every";
    const job = {
      id,
      name: "tick",
      enabled: true,
      schedule: { kind: "every", everyMs: 2000, fromMs: now },
      message: "SAY tock",
      agentId: "main",
      sessionKey: key,
      nextRunAtMs: now + 2000,
      createdAtMs: now,
      updatedAtMs: now,
      deleteAfterRun: false,
    };
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("INSERT INTO picoclaw_state (namespace, key, value, version, bytes) VALUES ('cron', $1, $2::json, 1, $3)", [
        id,
        JSON.stringify(job),
        Buffer.byteLength(JSON.stringify(job)),
      ]);
    } finally {
      await client.end();
    }
    // Every gateway lists it (each reads the same database).
    for (const g of gateways)
      await eventually(async () => expect((await jsonOf(await fetch(`${g.url}/v1/cron`))).jobs.map((j: { id: string }) => j.id)).toEqual([id]));
    // Five runs, then the job is removed and the fleet left to finish what it runs.
    await eventually(async () => expect((await userMessages(a.url, key)).length).toBeGreaterThanOrEqual(5), { ms: 40_000 });
    expect((await fetch(`${b.url}/v1/cron/${id}`, { method: "DELETE" })).status).toBe(200);
    await eventually(async () => expect(await idle(gateways)).toBe(true));

    const runs = (await userMessages(a.url, key)).map((text) => runOf(text));
    expect(runs.map((run) => run?.[0])).toEqual(runs.map(() => id));
    const dues = runs.map((run) => run![1]);
    // Once each: no due time ran twice, and the model was asked once per run.
    expect(new Set(dues).size).toBe(dues.length);
    const calls = model.server.requests.filter((r) => runOf(askedFor(r))?.[0] === id);
    expect(calls.map((r) => runOf(askedFor(r))![1]).sort()).toEqual([...dues].sort());
    // Each due time is on the job's 2 s grid, after it was made.
    for (const due of dues) expect((Date.parse(due) - now) % 2000).toBe(0);
    for (const g of gateways) expect(g.child.exitCode).toBeNull();
  });
});
