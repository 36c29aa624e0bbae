/**
 * The fleet's outbox and stop switches (src/session/postgres/fleet.ts) on a
 * real, throwaway cluster: several members on one database, each as one
 * gateway process has it (its pools, its LISTEN connection), driven through
 * the ports the runtime uses (SessionOutbox, StopBoard).
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PgDatabase } from "../../src/session/postgres/database.js";
import { type FleetMember, fleetMember } from "../../src/session/postgres/fleet.js";
import { postgresOptions } from "../../src/session/postgres/options.js";
import { TABLE_BOUNDS } from "../../src/session/postgres/pg-outbox.js";
import type { OutboxItem, SessionStream } from "../../src/session/outbox.js";
import { type RecordingLogger, recordingLogger } from "../support/project.js";
import { type Cluster, postgresTests, useCluster } from "../support/postgres.js";
import { eventually, within } from "../support/wait.js";

const tests = postgresTests();
let cluster: Cluster;
const KEY = "agent:main:http:fleet";
const delivery = (text: string): OutboxItem => ({ type: "delivery", from: "agent", text });

interface Member extends FleetMember {
  logger: RecordingLogger;
  db: PgDatabase;
}

const members: Member[] = [];
afterEach(async () => {
  await Promise.allSettled(members.splice(0).map((m) => m.connection.close()));
});

/** One gateway's share of the fleet on the database `url`, ready (migrated, listening). */
async function member(url: string): Promise<Member> {
  const logger = recordingLogger();
  const db = new PgDatabase(postgresOptions.parse({ url, query_timeout_ms: 5_000, connect_timeout_ms: 2_000 })!, { logger });
  const made = { ...fleetMember(db, { logger }), logger, db };
  members.push(made);
  await made.connection.ready();
  return made;
}

/** A stream of the session on a member, once the fleet knows of it (the events route answers then). */
async function opened(on: Member, after?: string): Promise<SessionStream> {
  const stream = on.outbox.subscribe(KEY, after === undefined ? {} : { after });
  await stream.ready;
  return stream;
}

/** Items a stream has now or gets soon, until `count` of them came. */
async function taken(stream: SessionStream, count: number): Promise<{ id: string; item: OutboxItem }[]> {
  const got: { id: string; item: OutboxItem }[] = [];
  await within(
    `${count} item(s) on the stream`,
    (async () => {
      while (got.length < count) {
        for (let item = stream.take(); item; item = stream.take()) got.push({ id: stream.lastId!, item });
        if (got.length < count) await stream.changed();
      }
    })(),
    { instead: () => `it got ${JSON.stringify(got)}` },
  );
  return got;
}

/** The outbox rows of a session, as the table has them. */
async function rowsOf(url: string, sessionKey = KEY): Promise<{ id: string; state: string; text: string | null }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT id::text AS id, state, item->>'text' AS text FROM picoclaw_outbox WHERE session_key = $1 ORDER BY id", [
      sessionKey,
    ]);
    return rows;
  } finally {
    await client.end();
  }
}

describe.runIf(tests.run)("the fleet's outbox and stops on Postgres", () => {
  useCluster(tests.found, (started) => {
    cluster = started;
  });

  it("a delivery and a notice published on A reach a stream open on B, with the row's id as their event id", async () => {
    const url = await cluster.database();
    const [a, b] = [await member(url), await member(url)];
    const stream = await opened(b);
    // A writes a session's notices once it heard that a stream of it opened somewhere (B's NOTIFY on picoclaw_watch).
    await eventually(() => expect(a.outbox.writesNoticesOf(KEY)).toBe(true));
    expect(a.outbox.writesNoticesOf("agent:main:http:nobody-watches")).toBe(false);
    a.outbox.publish(KEY, { type: "notice", event: "subagent.start", data: { id: "x", label: "l", agent: "main" } });
    a.outbox.publish(KEY, delivery("from A"), true);
    const got = await taken(stream, 2);
    expect(got.map((g) => g.item)).toEqual([{ type: "notice", event: "subagent.start", data: { id: "x", label: "l", agent: "main" } }, delivery("from A")]);
    const rows = await rowsOf(url);
    expect(got.map((g) => g.id)).toEqual(rows.map((r) => r.id));
    // B's stream showed the delivery: it is not kept (no drain anywhere gets it), and the notice never was.
    await eventually(async () => expect((await rowsOf(url)).map((r) => r.state)).toEqual(["live", "shown"]));
    expect(await a.outbox.drain(KEY)).toEqual([]);
    expect(await b.outbox.drain(KEY)).toEqual([]);
    stream.close();
  });

  it("a delivery no stream anywhere showed is kept in the table and handed out once: to the next stream on any gateway, or a drain", async () => {
    const url = await cluster.database();
    const [a, b, c] = [await member(url), await member(url), await member(url)];
    a.outbox.publish(KEY, delivery("kept 1"), true);
    a.outbox.publish(KEY, delivery("kept 2"), true);
    await a.outbox.flush();
    expect((await rowsOf(url)).map((r) => [r.state, r.text])).toEqual([
      ["waiting", "kept 1"],
      ["waiting", "kept 2"],
    ]);
    const stream = await opened(b);
    expect((await taken(stream, 2)).map((g) => g.item)).toEqual([delivery("kept 1"), delivery("kept 2")]);
    expect(await c.outbox.drain(KEY)).toEqual([]);
    stream.close();
    // Another one, with no stream open: the first drain on any gateway takes it, the next gets nothing.
    a.outbox.publish(KEY, delivery("kept 3"), true);
    await a.outbox.flush();
    // (C asks the table once it heard of a kept row of the session: its NOTIFY.)
    await eventually(async () => expect(await c.outbox.drain(KEY)).toEqual([{ from: "agent", text: "kept 3" }]));
    expect(await b.outbox.drain(KEY)).toEqual([]);
    expect(await a.outbox.drain(KEY)).toEqual([]);
  });

  it("streams on two gateways both show a delivery; a stream that closes without showing what it held gives it back to the fleet", async () => {
    const url = await cluster.database();
    const [a, b, c] = [await member(url), await member(url), await member(url)];
    const onB = await opened(b);
    const onC = await opened(c);
    a.outbox.publish(KEY, delivery("to both"), true);
    expect((await taken(onB, 1))[0]!.item).toEqual(delivery("to both"));
    expect((await taken(onC, 1))[0]!.item).toEqual(delivery("to both"));
    onC.close();
    // B's stream is stuck: it gets the next one queued and never shows it; then its client leaves.
    a.outbox.publish(KEY, delivery("never read"), true);
    await eventually(async () => expect((await rowsOf(url)).at(-1)).toMatchObject({ text: "never read", state: "held" }));
    expect(await a.outbox.drain(KEY)).toEqual([]);
    onB.close();
    await eventually(async () => expect((await rowsOf(url)).at(-1)).toMatchObject({ text: "never read", state: "waiting" }));
    expect(await c.outbox.drain(KEY)).toEqual([{ from: "agent", text: "never read" }]);
  });

  it("what the streams of a gateway that died held is handed out again: its LISTEN connection is gone, so the rows are anyone's", async () => {
    const url = await cluster.database();
    const [a, b] = [await member(url), await member(url)];
    const stuck = await opened(b);
    a.outbox.publish(KEY, delivery("held by B"), true);
    await eventually(async () => expect((await rowsOf(url)).map((r) => r.state)).toEqual(["held"]));
    expect(await a.outbox.drain(KEY)).toEqual([]);
    // B dies: its streams never give the row back; the database only sees its LISTEN connection go.
    await b.listener.close();
    expect(await a.outbox.drain(KEY)).toEqual([{ from: "agent", text: "held by B" }]);
    expect(stuck.ended).toBe(false);
  });

  it("a stream that comes back with its Last-Event-ID, on another gateway, gets what it missed, also what another client's stream took", async () => {
    const url = await cluster.database();
    const [a, b] = [await member(url), await member(url)];
    const first = await opened(b);
    a.outbox.publish(KEY, delivery("seen"), true);
    const [seen] = await taken(first, 1);
    first.close();
    a.outbox.publish(KEY, { type: "notice", event: "turn.start", data: { agent: "main", session_key: KEY } });
    a.outbox.publish(KEY, delivery("missed"), true);
    await a.outbox.flush();
    // Another client's stream, on A, takes the kept delivery.
    const other = await opened(a);
    expect((await taken(other, 1))[0]!.item).toEqual(delivery("missed"));
    other.close();
    const back = await opened(a, seen!.id);
    const got = await taken(back, 2);
    expect(got.map((g) => g.item)).toEqual([{ type: "notice", event: "turn.start", data: { agent: "main", session_key: KEY } }, delivery("missed")]);
    expect(got.every((g) => BigInt(g.id) > BigInt(seen!.id))).toBe(true);
    back.close();
  });

  it("/clear forgets the session's rows; other sessions keep theirs", async () => {
    const url = await cluster.database();
    const a = await member(url);
    a.outbox.publish(KEY, delivery("gone"), true);
    a.outbox.publish("agent:main:http:other", delivery("stays"), true);
    await a.outbox.clearSession(KEY);
    expect(await rowsOf(url)).toEqual([]);
    expect(await a.outbox.drain("agent:main:http:other")).toEqual([{ from: "agent", text: "stays" }]);
  });

  it("the table is bounded per session: the oldest kept deliveries go first, and the log says so", async () => {
    const url = await cluster.database();
    const a = await member(url);
    const { maxItems } = TABLE_BOUNDS.kept;
    for (let n = 0; n < maxItems + 5; n++) a.outbox.publish(KEY, delivery(`d${n}`), true);
    await a.outbox.flush();
    await eventually(async () => expect((await rowsOf(url)).length).toBe(maxItems));
    const kept = await a.outbox.drain(KEY);
    expect(kept[0]).toEqual({ from: "agent", text: "d5" });
    expect(kept).toHaveLength(maxItems);
    const dropped = a.logger.lines
      .filter((l) => l.level === "warn")
      .map((l) => Number(/^dropped (\d+) undelivered message\(s\) of agent:main:http:fleet: nobody collected them$/.exec(l.message)?.[1] ?? Number.NaN));
    expect(dropped.reduce((x, y) => x + y, 0)).toBe(5);
  });

  it("/stop on B stops the work A holds the session's switch for, and says so; with nothing running anywhere it says nothing was", async () => {
    const url = await cluster.database();
    const [a, b] = [await member(url), await member(url)];
    const held = a.stops.hold(KEY);
    expect(await within("B's /stop", b.stops.stop(KEY))).toBe(true);
    await eventually(() => expect(held.signal.aborted).toBe(true));
    expect((held.signal.reason as Error).message).toBe("stopped by /stop");
    held.release();
    expect(await within("B's second /stop", b.stops.stop(KEY))).toBe(false);
    // A switch held afterwards is a fresh one: nothing stopped it.
    const next = a.stops.hold(KEY);
    expect(next.signal.aborted).toBe(false);
    next.release();
  });

  it("the database restarting: the LISTEN connection comes back (said in the log), and deliveries and stops cross the fleet again", {
    timeout: 120_000,
  }, async () => {
    const url = await cluster.database();
    const [a, b] = [await member(url), await member(url)];
    const stream = await opened(b);
    a.outbox.publish(KEY, delivery("before"), true);
    expect((await taken(stream, 1))[0]!.item).toEqual(delivery("before"));
    await cluster.stop();
    try {
      await eventually(() => expect(b.listener.connected).toBe(false));
      // Down: what B publishes still reaches B's own stream.
      b.outbox.publish(KEY, delivery("while down"), true);
      const [during] = await taken(stream, 1);
      expect(during!.item).toEqual(delivery("while down"));
      expect(during!.id).toMatch(/^\d+\.\d+$/);
    } finally {
      await cluster.start();
    }
    await eventually(() => expect(b.listener.connected && a.listener.connected).toBe(true), { ms: 30_000 });
    expect(b.logger.lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/^the session database's notification connection was lost/));
    expect(b.logger.lines.map((l) => l.message)).toContain(
      "the session database's notification connection is back: deliveries and stops from other gateways reach this one again",
    );
    a.outbox.publish(KEY, delivery("after"), true);
    expect((await taken(stream, 1))[0]!.item).toEqual(delivery("after"));
    const held = a.stops.hold(KEY);
    expect(await within("B's /stop after the restart", b.stops.stop(KEY))).toBe(true);
    expect(held.signal.aborted).toBe(true);
    held.release();
    stream.close();
  });
});
