/**
 * Three real gateway processes on one Postgres database (a throwaway
 * cluster) behind real nginx running the shipped deploy/nginx.conf (only
 * its upstream servers and listen address substituted). Thirty sessions,
 * named the three ways the file hashes (the body's `session`, the OpenAI
 * body's `user`, the X-Session-Id header), take turns at once; one gateway
 * is killed with SIGKILL while its turns wait on the model; the database
 * is stopped and started again while turns run. What the database holds at
 * the end is exactly the turns that were acknowledged, once each, in order.
 */
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { askedFor } from "../support/fake-openai.js";
import { type Nginx, nginxTests, startNginx } from "../support/nginx.js";
import { type Cluster, postgresTests, startCluster } from "../support/postgres.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { openGate, useScriptedModel } from "../support/scripted-openai.js";
import { sseReader } from "../support/sse.js";
import { eventually, within } from "../support/wait.js";

const postgres = postgresTests();
const nginx = nginxTests();
let cluster: Cluster;
const proxies: Nginx[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.stop();
});

interface Gateway {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** host:port, as nginx's upstream and $upstream_addr name it. */
  address: string;
}

/** A gateway process (`node dist/main.js gateway`, any free port) in a project of its own; killed when the test ends. */
async function gateway(project: string): Promise<Gateway> {
  const { child, exited, output } = picoclawProcess(["gateway"], project);
  await eventually(() => expect(output()).toMatch(/listening on http:\/\/\S+/));
  return { child, exited, address: /listening on http:\/\/([^/\s]+)/.exec(output())![1]! };
}

/** The three ways a request names its session, each a kind of session of the test. */
type Kind = "chat" | "user" | "header";
interface Session {
  id: string;
  kind: Kind;
  /** Its key in the database. */
  key: string;
}
const session = (kind: Kind, id: string): Session => ({ id, kind, key: `agent:main:${kind === "chat" ? "http" : "openai"}:${id}` });

interface Answer {
  status: number;
  /** The error's code (ours or OpenAI's shape), when the body is one. */
  code?: string;
  reply?: string;
}

/** One turn through nginx, the session named the way its kind names it. */
async function send(base: string, s: Session, message: string): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  let route = "/v1/chat/completions";
  let body: unknown = { model: "main", messages: [{ role: "user", content: message }], ...(s.kind === "user" ? { user: s.id } : {}) };
  if (s.kind === "header") headers["x-session-id"] = s.id;
  if (s.kind === "chat") {
    route = "/v1/chat";
    body = { message, session: s.id };
  }
  const res = await fetch(`${base}${route}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  let json: { reply?: string; choices?: { message: { content: string } }[]; error?: { code?: string } } | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // nginx's own error page (502 for a request its gateway died under)
  }
  return { status: res.status, code: json?.error?.code, reply: json?.reply ?? json?.choices?.[0]?.message.content };
}

/** Every stored message of the database, by session key, in order. */
async function stored(databaseUrl: string): Promise<Map<string, { role: string; content: string }[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ key: string; role: string; content: string }>(
      "SELECT session_key AS key, message->>'role' AS role, message->>'content' AS content FROM picoclaw_messages ORDER BY session_key, seq",
    );
    const bySession = new Map<string, { role: string; content: string }[]>();
    for (const row of rows) bySession.set(row.key, [...(bySession.get(row.key) ?? []), { role: row.role, content: row.content }]);
    return bySession;
  } finally {
    await client.end();
  }
}

/** nginx's access log lines after the first `from`, as {status, the gateway that answered, the session hashed, the request line}. */
function served(proxy: Nginx, from = 0) {
  return proxy
    .access()
    .split("\n")
    .filter(Boolean)
    .slice(from)
    .map((line) => {
      const [, status, upstreams, key, request] = /^(\d+) (.*) (\S+) "(.*)"$/.exec(line)!;
      // "a:1, b:2" when nginx tried a gateway that refused and went on to the next: the last one answered.
      return { status: Number(status), upstream: upstreams!.split(", ").at(-1)!, key: key!, request: request! };
    });
}

describe.runIf(postgres.run && nginx.run)("three gateways on one database behind the shipped nginx config", () => {
  const model = useScriptedModel();
  beforeAll(async () => {
    cluster = await startCluster(postgres.found);
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  }, 120_000);

  /** `count` gateways on a new database of the cluster (the scripted model's entry given `entry`), and nginx in front of them. */
  async function fleet(count: number, entry: Record<string, unknown> = {}) {
    const url = await cluster.database();
    const config = { ...openaiConfig(model.server.url, entry), gateway: { port: 0 }, session: { store: "postgres", postgres: { url } } };
    const gateways = await Promise.all(Array.from({ length: count }, () => gateway(writeProject({ config }))));
    const proxy = await startNginx(
      nginx.found,
      gateways.map((g) => g.address),
    );
    proxies.push(proxy);
    return { url, gateways, proxy };
  }

  it("under concurrent turns on 30 sessions, a SIGKILLed gateway and a database restart: every acknowledged turn is stored once, nothing else is, and every session goes on", {
    timeout: 120_000,
  }, async () => {
    const { url, gateways, proxy } = await fleet(3, { stream: false });
    const base = proxy.url;

    const sessions: Session[] = (["chat", "user", "header"] as const).flatMap((kind) => Array.from({ length: 10 }, (_, i) => session(kind, `${kind[0]}${i}`)));
    /** What each session was answered 2xx for: the messages it must hold, in order. */
    const acknowledged = new Map<string, string[]>(sessions.map((s) => [s.key, []]));
    const turn = async (s: Session, message: string): Promise<Answer> => {
      const answer = await send(base, s, message);
      if (answer.status >= 200 && answer.status < 300) acknowledged.get(s.key)!.push(message);
      return answer;
    };
    const say = (s: Session, n: number) => `SAY ${s.id} turn ${n}`;
    const logged = () => served(proxy).length;

    // Round 1: every session's first turn, all at once; nginx's log says which gateway holds each.
    const first = await Promise.all(sessions.map((s) => turn(s, say(s, 1))));
    expect(first.map((a) => a.status)).toEqual(sessions.map(() => 200));
    expect(first.map((a) => a.reply)).toEqual(sessions.map((s) => `${s.id} turn 1`));
    // nginx writes a request's line after its answer has gone: waited for until every session's POST is there
    // (counting lines was not enough: other requests' lines are counted too).
    const home = new Map<string, string>();
    await eventually(() => {
      for (const line of served(proxy)) if (line.request.startsWith("POST")) home.set(line.key, line.upstream);
      expect([...home.keys()].sort()).toEqual(sessions.map((s) => s.id).sort());
    });
    // The one to kill: the gateway of c0; it must hold a session of each kind (more are added until it does).
    const victim = home.get("c0")!;
    for (const kind of ["user", "header"] as const) {
      for (let extra = 0; ![...home].some(([id, at]) => at === victim && id.startsWith(kind[0]!)); extra++) {
        expect(extra, `a ${kind} session hashed to ${victim}`).toBeLessThan(40);
        const s = session(kind, `${kind[0]}x${extra}`);
        sessions.push(s);
        acknowledged.set(s.key, []);
        const before = logged();
        expect((await turn(s, say(s, 1))).status).toBe(200);
        await eventually(() => expect(logged()).toBe(before + 1));
        home.set(s.id, served(proxy, before)[0]!.upstream);
      }
    }
    const onVictim = sessions.filter((s) => home.get(s.id) === victim);
    const elsewhere = sessions.filter((s) => home.get(s.id) !== victim);
    expect(new Set(onVictim.map((s) => s.kind))).toEqual(new Set(["chat", "user", "header"]));
    expect(elsewhere.length).toBeGreaterThan(0);

    // Round 2: every session's turn waits on the model; the victim dies with its turns in flight.
    const asked = model.server.requests.length;
    const second = sessions.map((s) => turn(s, `${say(s, 2)}\nWAIT fleet-kill`));
    await eventually(() => expect(new Set(model.server.requests.slice(asked).map(askedFor)).size).toBe(sessions.length));
    const dead = gateways.find((g) => g.address === victim)!;
    dead.child.kill("SIGKILL");
    expect(await within("the victim to die of SIGKILL", dead.exited)).toBeNull();
    openGate("fleet-kill");
    const answers = await within("round 2's answers", Promise.all(second));
    // The victim's clients got nginx's 502 (their turns were cut off, never acknowledged); everyone else their answer.
    expect(answers.map((a) => a.status)).toEqual(sessions.map((s) => (home.get(s.id) === victim ? 502 : 200)));

    // Rounds 3 and 4: every session goes on, two turns each, sessions side by side; the victim's move to a survivor.
    const mark = logged();
    const later = await Promise.all(sessions.map(async (s) => [await turn(s, say(s, 3)), await turn(s, say(s, 4))]));
    expect(later.flat().map((a) => a.status)).toEqual(sessions.flatMap(() => [200, 200]));
    expect(later.map(([, fourth]) => fourth!.reply)).toEqual(sessions.map((s) => `${s.id} turn 4`));
    await eventually(() => expect(logged()).toBeGreaterThanOrEqual(mark + 2 * sessions.length));
    const moved = new Map<string, Set<string>>();
    // 200s only: a round-2 line nginx wrote after `mark` (the victim's 502s) is not where a session went on.
    for (const line of served(proxy, mark)) if (line.status === 200) moved.set(line.key, (moved.get(line.key) ?? new Set()).add(line.upstream));
    // Consistent hashing: a session whose gateway lives stays on it; a dead gateway's sessions each go to one survivor.
    for (const s of elsewhere) expect([...moved.get(s.id)!], s.id).toEqual([home.get(s.id)]);
    for (const s of onVictim) {
      expect(moved.get(s.id)!.size, s.id).toBe(1);
      expect([...moved.get(s.id)!][0], s.id).not.toBe(victim);
    }
    // A moved session carried on from its history: the survivor's model call saw turn 1's answer.
    const moving = onVictim[0]!;
    const thirdCall = model.server.requests.find((r) => askedFor(r) === say(moving, 3))!;
    expect((thirdCall.body.messages as { content: string }[]).map((m) => m.content)).toContain(`${moving.id} turn 1`);

    // The database stops while three turns (one per kind) wait on the model, and starts again.
    const survivors = gateways.filter((g) => g !== dead);
    const waiting = [sessions.find((s) => s.kind === "chat")!, sessions.find((s) => s.kind === "user")!, sessions.find((s) => s.kind === "header")!];
    const askedBefore = model.server.requests.length;
    const inFlight = waiting.map((s) => turn(s, `${say(s, 5)}\nWAIT fleet-db`));
    await eventually(() => expect(model.server.requests.length - askedBefore).toBe(waiting.length));
    await cluster.stop();
    let restarted = false;
    try {
      const during = await Promise.all(sessions.filter((s) => !waiting.includes(s)).map((s) => turn(s, say(s, 5))));
      expect(new Set(during.map((a) => `${a.status} ${a.code}`))).toEqual(new Set(["503 store_unavailable"]));
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(503);
      expect((await jsonOf(ready)).error.code).toBe("store_unavailable");
      await cluster.start();
      restarted = true;
    } finally {
      if (!restarted) await cluster.start();
    }
    openGate("fleet-db");
    // Each waiting turn either got the database back in time (stored, 200) or said it did not (503, nothing stored).
    for (const answer of await within("the turns that waited through the restart", Promise.all(inFlight))) {
      expect([200, 503]).toContain(answer.status);
      if (answer.status === 503) expect(answer.code).toBe("store_unavailable");
    }
    for (const g of survivors) {
      const direct = `http://${g.address}`;
      await eventually(async () => expect((await fetch(`${direct}/ready`)).status).toBe(200));
    }
    const after = await Promise.all(sessions.map((s) => turn(s, say(s, 6))));
    expect(after.map((a) => a.status)).toEqual(sessions.map(() => 200));

    // What the database holds: exactly the acknowledged turns, each once (the message and its answer), in order.
    const histories = await stored(url);
    for (const s of sessions) {
      const expected = acknowledged.get(s.key)!.flatMap((message) => [
        { role: "user", content: message },
        { role: "assistant", content: message.split("\n")[0]!.slice("SAY ".length) },
      ]);
      expect(histories.get(s.key), s.key).toEqual(expected);
    }
    expect([...histories.keys()].sort()).toEqual(sessions.map((s) => s.key).sort());
    // The survivors never crashed.
    for (const g of survivors) expect(g.child.exitCode).toBeNull();
  });

  it("a session's event stream and its streamed answer pass through nginx as they happen, both on the session's gateway; a body over 1 MiB is the gateway's 413", {
    timeout: 60_000,
  }, async () => {
    const { gateways, proxy } = await fleet(2);
    const key = "agent:main:http:live";
    const events = await fetch(`${proxy.url}/v1/sessions/${key}/events`);
    expect(events.status).toBe(200);
    const watching = sseReader(events);
    const answer = await fetch(`${proxy.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "STREAM live-words\nSAY one two three", session: "live", stream: true }),
    });
    expect(answer.headers.get("content-type")).toContain("text/event-stream");
    const streamed = sseReader(answer);
    // The model has sent its first word only (the rest waits for the gate): both streams already carry the turn.
    expect((await streamed.until("text.delta")).map((e) => e.event)).toEqual(["turn.start", "text.delta"]);
    expect(streamed.events.at(-1)!.data).toEqual({ text: "one " });
    expect(await watching.next()).toEqual({ event: "turn.start", data: { agent: "main", session_key: key } });
    openGate("live-words");
    expect((await streamed.until("turn.end")).at(-1)!.data.reply).toBe("one two three");
    expect((await watching.until("turn.end")).at(-1)!.data).toMatchObject({ session_key: key, outcome: "done" });
    await watching.close();
    await streamed.close();
    // The stream (routed by the key in its path) and the turn (by the body's "session") went to one gateway.
    await eventually(() => expect(served(proxy).filter((line) => line.key === "live")).toHaveLength(2));
    // (Logged as each ends: the stream after the turn.)
    const [turn, stream] = served(proxy).filter((line) => line.key === "live");
    expect(turn!.request).toMatch(/^POST \/v1\/chat /);
    expect(stream!.request).toMatch(/^GET \/v1\/sessions\/agent:main:http:live\/events /);
    expect(stream!.upstream).toBe(turn!.upstream);
    expect(gateways.map((g) => g.address)).toContain(turn!.upstream);
    // A body over the gateway's 1 MiB: nginx's 413 says it as the gateway does, in JSON.
    const big = await fetch(`${proxy.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "x".repeat(1024 * 1024), session: "live" }),
    });
    expect(big.status).toBe(413);
    expect((await jsonOf(big)).error.code).toBe("payload_too_large");
  });
});
