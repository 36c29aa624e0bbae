/**
 * The logic of the fleet's outbox, stops and LISTEN connection (store
 * postgres) without a database: the table is an in-memory one with the
 * same states (the real statements run on a cluster in
 * test/process/postgres-outbox.test.ts), the connection a fake client,
 * time ManualTimers.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { OutboxItem, SessionStream } from "../../src/session/outbox.js";
import type { NewRow, OutboxTable, Row, RowState } from "../../src/session/postgres/outbox-rows.js";
import { LISTEN_RETRY, type ListenClient, PgListener } from "../../src/session/postgres/pg-listener.js";
import { PgOutbox } from "../../src/session/postgres/pg-outbox.js";
import { PgStopBoard, STOP_ANSWER_MS } from "../../src/session/postgres/pg-stops.js";
import { recordingLogger } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";

const KEY = "agent:main:http:s";
const delivery = (text: string): OutboxItem => ({ type: "delivery", from: "agent", text });

interface MemoryRow {
  id: number;
  sessionKey: string;
  item: OutboxItem;
  bytes: number;
  state: RowState;
  holder: string | undefined;
  origin: string;
}

/** The outbox table in memory, with the states the real one has; `down` makes every call fail as a database that went away. */
class MemoryTable {
  readonly rows: MemoryRow[] = [];
  /** Sessions streams were opened for, the most recent last. */
  watched: string[] = [];
  /** How many times a chat response asked for kept deliveries. */
  takes = 0;
  down = false;
  private next = 1;

  as(gateway: string): OutboxTable {
    const check = () => {
      if (this.down) throw new Error("the session database is not reachable: connect ECONNREFUSED");
    };
    const view = (row: MemoryRow, before: RowState, mine: boolean): Row => ({
      id: String(row.id),
      sessionKey: row.sessionKey,
      item: row.item,
      bytes: row.bytes,
      state: before,
      mine,
    });
    const claim = (row: MemoryRow): Row => {
      const before = row.state;
      const mine = before === "waiting";
      if (mine) Object.assign(row, { state: "held", holder: gateway });
      return view(row, before, mine);
    };
    return {
      newest: async () => String(this.next - 1),
      insert: async (rows: readonly NewRow[]) => {
        check();
        return rows.map((r) => {
          const id = this.next++;
          this.rows.push({ id, ...r, holder: r.state === "held" ? gateway : undefined, origin: gateway });
          return String(id);
        });
      },
      claimByIds: async (ids) => {
        check();
        return this.rows.filter((r) => ids.includes(String(r.id))).map(claim);
      },
      claimAfter: async (after, keys) => {
        check();
        return this.rows.filter((r) => r.id > Number(after) && keys.includes(r.sessionKey) && r.origin !== gateway).map(claim);
      },
      opening: async (key, after) => {
        check();
        return this.rows
          .filter((r) => r.sessionKey === key && (r.state === "waiting" || r.id > Number(after)))
          .map((r) => (r.state === "waiting" ? claim(r) : view(r, r.state, false)));
      },
      take: async (key) => {
        check();
        const rows = this.rows
          .filter((r) => r.sessionKey === key && r.state === "waiting")
          .map((r) => {
            r.state = "taken";
            return view(r, "waiting", false);
          });
        this.takes++;
        return { rows, more: this.rows.some((r) => r.sessionKey === key && r.state === "held") };
      },
      keptKeys: async () => {
        check();
        return [...new Set(this.rows.filter((r) => r.state === "waiting" || r.state === "held").map((r) => r.sessionKey))];
      },
      watch: async (key) => {
        check();
        this.watched = [...this.watched.filter((k) => k !== key), key];
      },
      watchedKeys: async (limit) => {
        check();
        return this.watched.slice(-limit).reverse();
      },
      pruneWatched: async () => {},
      shown: async (ids) => {
        check();
        for (const r of this.rows) if (ids.includes(String(r.id)) && (r.state === "held" || r.state === "waiting")) r.state = "shown";
      },
      giveBack: async (ids) => {
        check();
        for (const r of this.rows)
          if (ids.includes(String(r.id)) && r.state === "held" && r.holder === gateway) Object.assign(r, { state: "waiting", holder: undefined });
      },
      forget: async (key) => {
        check();
        this.rows.splice(0, this.rows.length, ...this.rows.filter((r) => r.sessionKey !== key));
      },
      prune: async () => new Map(),
      pruneAll: async () => new Map(),
    };
  }

  states(): [string, RowState][] {
    return this.rows.map((r) => [(r.item as { text?: string }).text ?? "", r.state]);
  }
}

function outboxOn(table: MemoryTable, gateway = "a") {
  const timers = new ManualTimers();
  const logger = recordingLogger();
  const outbox = new PgOutbox({ rows: table.as(gateway), gateway, logger, timer: timers.timer });
  outbox.listened();
  return { outbox, timers, logger };
}

async function takeSoon(stream: SessionStream, count: number): Promise<{ id: string; item: OutboxItem }[]> {
  const got: { id: string; item: OutboxItem }[] = [];
  await eventually(() => {
    for (let item = stream.take(); item; item = stream.take()) got.push({ id: stream.lastId!, item });
    expect(got.length).toBeGreaterThanOrEqual(count);
  });
  return got;
}

describe("the fleet's outbox, on a table in memory", () => {
  it("while the database cannot be written, an item still reaches this gateway's streams, its id the last one known and a dot", async () => {
    const table = new MemoryTable();
    const { outbox, logger } = outboxOn(table);
    const stream = outbox.subscribe(KEY);
    outbox.publish(KEY, delivery("written"), true);
    expect((await takeSoon(stream, 1))[0]!.id).toBe("1");
    table.down = true;
    outbox.publish(KEY, delivery("not written"), true);
    outbox.publish(KEY, delivery("nor this"), true);
    expect((await takeSoon(stream, 2)).map((g) => g.id)).toEqual(["1.1", "1.2"]);
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      "deliveries could not be written to the session database; they reach only this gateway's streams meanwhile: the session database is not reachable: connect ECONNREFUSED",
    ]);
  });

  it("a kept delivery no stream showed while the database was down waits in memory, and is written once it answers", async () => {
    const table = new MemoryTable();
    const { outbox, timers } = outboxOn(table);
    table.down = true;
    outbox.publish(KEY, delivery("for later"), true);
    await outbox.flush();
    expect(table.rows).toEqual([]);
    // Written when the retry's time comes and the database answers again.
    table.down = false;
    expect(timers.fireAll()).toBeGreaterThan(0);
    await eventually(() => expect(table.states()).toEqual([["for later", "waiting"]]));
    expect(await outbox.drain(KEY)).toEqual([{ from: "agent", text: "for later" }]);
  });

  it("while the database is down, a chat response on this gateway still hands out what waits in memory, once", async () => {
    const table = new MemoryTable();
    const { outbox } = outboxOn(table);
    table.down = true;
    outbox.publish(KEY, delivery("kept here"), true);
    expect(await outbox.drain(KEY)).toEqual([{ from: "agent", text: "kept here" }]);
    expect(await outbox.drain(KEY)).toEqual([]);
  });

  it("a delivery for a session with a stream here is held from the start; a stream that closes without showing it gives it back, one that shows it records that", async () => {
    const table = new MemoryTable();
    const { outbox } = outboxOn(table);
    const stuck = outbox.subscribe(KEY);
    await outbox.flush();
    outbox.publish(KEY, delivery("unread"), true);
    await outbox.flush();
    expect(table.states()).toEqual([["unread", "held"]]);
    stuck.close();
    await eventually(() => expect(table.states()).toEqual([["unread", "waiting"]]));
    const reader = outbox.subscribe(KEY);
    expect((await takeSoon(reader, 1))[0]!.item).toEqual(delivery("unread"));
    await eventually(() => expect(table.states()).toEqual([["unread", "shown"]]));
    reader.close();
    expect(await outbox.drain(KEY)).toEqual([]);
  });

  it("once it knows the fleet, a notice of a session no stream anywhere was opened for is not written; once one opens, here or elsewhere, it is", async () => {
    const table = new MemoryTable();
    const { outbox } = outboxOn(table);
    await outbox.ready();
    const notice: OutboxItem = { type: "notice", event: "turn.start", data: { agent: "main", session_key: KEY } };
    outbox.publish(KEY, notice);
    outbox.publish(KEY, delivery("kept"), true);
    await outbox.flush();
    // Nobody would read the notice; the delivery is kept for whoever comes.
    expect(table.states()).toEqual([["kept", "waiting"]]);
    outbox.watchNotified(KEY);
    outbox.publish(KEY, notice);
    await outbox.flush();
    expect(table.rows.map((r) => r.item.type)).toEqual(["delivery", "notice"]);
    const other = "agent:main:http:other";
    outbox.subscribe(other).close();
    outbox.publish(other, notice);
    await outbox.flush();
    expect(table.rows.filter((r) => r.sessionKey === other)).toHaveLength(1);
    expect(table.watched).toEqual([other]);
  });

  it("a chat response asks the table for kept deliveries only when the session may have some (a kept row was written or NOTIFYed)", async () => {
    const table = new MemoryTable();
    const { outbox } = outboxOn(table);
    await outbox.ready();
    expect(await outbox.drain(KEY)).toEqual([]);
    expect(table.takes).toBe(0);
    outbox.notified(`b 7 w ${KEY}`);
    expect(await outbox.drain(KEY)).toEqual([]);
    expect(table.takes).toBe(1);
    // The table said there is nothing more: the next response does not ask.
    expect(await outbox.drain(KEY)).toEqual([]);
    expect(table.takes).toBe(1);
    outbox.publish(KEY, delivery("for the next answer"), true);
    expect(await outbox.drain(KEY)).toEqual([{ from: "agent", text: "for the next answer" }]);
    expect(table.takes).toBe(2);
    // Not knowing the fleet (its LISTEN connection lost), it asks every time.
    outbox.lost();
    await outbox.drain(KEY);
    await outbox.drain(KEY);
    expect(table.takes).toBe(4);
  });

  it("NOTIFYs: its own rows and those of sessions without a stream here are not read; a row NOTIFYed and caught up is shown once", async () => {
    const table = new MemoryTable();
    const a = outboxOn(table, "a");
    const b = outboxOn(table, "b");
    a.outbox.publish(KEY, delivery("one"), true);
    a.outbox.publish("agent:main:http:elsewhere", delivery("other"), true);
    await a.outbox.flush();
    b.outbox.notified(`a 2 w agent:main:http:elsewhere`);
    b.outbox.notified(`b 1 w ${KEY}`);
    await a.outbox.flush();
    expect(table.states()).toEqual([
      ["one", "waiting"],
      ["other", "waiting"],
    ]);
    const stream = b.outbox.subscribe(KEY);
    expect((await takeSoon(stream, 1)).map((g) => g.item)).toEqual([delivery("one")]);
    a.outbox.publish(KEY, delivery("two"), true);
    await a.outbox.flush();
    // B lost its LISTEN connection: the NOTIFY of "two" and the catch-up after it both find the row.
    b.outbox.lost();
    b.outbox.notified(`a 3 w ${KEY}`);
    b.outbox.listened();
    const got = await takeSoon(stream, 1);
    await b.outbox.flush();
    for (let item = stream.take(); item; item = stream.take()) got.push({ id: stream.lastId!, item });
    expect(got.map((g) => g.item)).toEqual([delivery("two")]);
  });
});

/** A fake LISTEN connection: it records what it was asked and can be cut as a restarting server cuts it. */
class FakeClient extends EventEmitter implements ListenClient {
  readonly asked: string[] = [];
  ended = false;
  async query(text: string): Promise<unknown> {
    this.asked.push(text);
    return {};
  }
  async end(): Promise<void> {
    this.ended = true;
  }
}

describe("the LISTEN connection", () => {
  it("listens to its channels; when the server cuts it, it says so once and connects again, waiting longer after each failed try", async () => {
    const timers = new ManualTimers();
    const logger = recordingLogger();
    const clients: FakeClient[] = [];
    let refuse = 0;
    const seen: string[] = [];
    const events: string[] = [];
    const listener = new PgListener({
      channels: ["picoclaw_outbox", "picoclaw_stop"],
      connect: async () => {
        if (refuse > 0) {
          refuse--;
          throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
        }
        const client = new FakeClient();
        clients.push(client);
        return client;
      },
      onNotification: (channel, payload) => seen.push(`${channel}: ${payload}`),
      onConnected: (again) => events.push(again ? "again" : "first"),
      onLost: () => events.push("lost"),
      logger,
      timer: timers.timer,
    });
    await listener.start();
    expect(clients[0]!.asked).toEqual(["LISTEN picoclaw_outbox", "LISTEN picoclaw_stop"]);
    clients[0]!.emit("notification", { channel: "picoclaw_outbox", payload: "g 1 k" });
    expect(seen).toEqual(["picoclaw_outbox: g 1 k"]);
    // The database restarts: the connection errs; two tries are refused, the third connects.
    refuse = 2;
    clients[0]!.emit("error", new Error("terminating connection due to administrator command"));
    expect(listener.connected).toBe(false);
    expect(clients[0]!.ended).toBe(true);
    for (let n = 0; n < 3; n++) {
      await eventually(() => expect(timers.pending()).toHaveLength(1));
      timers.fireAll();
    }
    await eventually(() => expect(listener.connected).toBe(true));
    expect(timers.started.map((t) => t.ms)).toEqual([LISTEN_RETRY.firstMs, LISTEN_RETRY.firstMs * 2, LISTEN_RETRY.firstMs * 4]);
    expect(events).toEqual(["first", "lost", "again"]);
    expect(logger.lines.map((l) => l.message)).toEqual([
      "the session database's notification connection was lost (terminating connection due to administrator command); trying again: until it is back, deliveries and stops from other gateways do not reach this one",
      "the session database's notification connection is back: deliveries and stops from other gateways reach this one again",
    ]);
    // A notification from the old connection is not heard twice, the new one's is.
    clients[0]!.emit("notification", { channel: "picoclaw_outbox", payload: "old" });
    clients[1]!.emit("notification", { channel: "picoclaw_outbox", payload: "g 2 k" });
    expect(seen).toEqual(["picoclaw_outbox: g 1 k", "picoclaw_outbox: g 2 k"]);
    await listener.close();
    expect(clients[1]!.ended).toBe(true);
    clients[1]!.emit("end");
    expect(timers.pending()).toEqual([]);
  });

  it("a first connection that cannot be made fails the start (start-up stops)", async () => {
    const listener = new PgListener({
      channels: ["picoclaw_outbox"],
      connect: async () => {
        throw new Error("connect ECONNREFUSED");
      },
      onNotification: () => {},
      logger: recordingLogger(),
      timer: new ManualTimers().timer,
    });
    await expect(listener.start()).rejects.toThrow("ECONNREFUSED");
  });
});

describe("/stop across the fleet", () => {
  /** A board whose NOTIFYs are recorded, and whose count of other gateways is `others`. */
  function board(others: number, listening = true) {
    const timers = new ManualTimers();
    const sent: { channel: string; payload: unknown }[] = [];
    let ids = 0;
    const stops = new PgStopBoard({
      db: {
        query: async <R>(_what: string, _text: string, values: unknown[] = []) => {
          sent.push({ channel: values[0] as string, payload: JSON.parse(values[1] as string) });
          return [{ others }] as R[];
        },
      },
      gateway: "me",
      listening: () => listening,
      ids: () => `r${++ids}`,
      timer: timers.timer,
      logger: recordingLogger(),
    });
    return { stops, sent, timers };
  }

  it("stops what runs here at once and tells the others; true without waiting for them", async () => {
    const { stops, sent } = board(2);
    const held = stops.hold(KEY);
    expect(await stops.stop(KEY)).toBe(true);
    expect(held.signal.aborted).toBe(true);
    expect(sent).toEqual([{ channel: "picoclaw_stop", payload: { g: "me", r: "r1", k: KEY } }]);
  });

  it("with nothing here, true as soon as another gateway says it stopped something; false once every one said no", async () => {
    const yes = board(2);
    const asked = yes.stops.stop(KEY);
    await eventually(() => expect(yes.sent).toHaveLength(1));
    yes.stops.answered(JSON.stringify({ g: "me", r: "r1", s: false, by: "x" }));
    yes.stops.answered(JSON.stringify({ g: "me", r: "r1", s: true, by: "y" }));
    expect(await asked).toBe(true);
    const no = board(2);
    const none = no.stops.stop(KEY);
    await eventually(() => expect(no.sent).toHaveLength(1));
    // An answer to another gateway's request, or to another request, does not count.
    no.stops.answered(JSON.stringify({ g: "other", r: "r1", s: true }));
    no.stops.answered(JSON.stringify({ g: "me", r: "r9", s: true }));
    no.stops.answered(JSON.stringify({ g: "me", r: "r1", s: false }));
    no.stops.answered(JSON.stringify({ g: "me", r: "r1", s: false }));
    expect(await none).toBe(false);
    expect(no.timers.pending()).toEqual([]);
  });

  it("gives up waiting after STOP_ANSWER_MS (a gateway that does not answer), saying nothing was stopped", async () => {
    const { stops, timers } = board(1);
    const asked = stops.stop(KEY);
    await eventually(() => expect(timers.pending(STOP_ANSWER_MS)).toHaveLength(1));
    timers.fireAll();
    expect(await asked).toBe(false);
  });

  it("a /stop another gateway sent stops what runs here and answers whether it did; its own is ignored", async () => {
    const { stops, sent } = board(1);
    const held = stops.hold(KEY);
    stops.received(JSON.stringify({ g: "me", r: "mine", k: KEY }));
    stops.received("not json");
    expect(held.signal.aborted).toBe(false);
    stops.received(JSON.stringify({ g: "other", r: "theirs", k: KEY }));
    expect(held.signal.aborted).toBe(true);
    await eventually(() => expect(sent).toEqual([{ channel: "picoclaw_stopped", payload: { g: "other", r: "theirs", s: true, by: "me" } }]));
  });
});
