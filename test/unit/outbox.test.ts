import { describe, expect, it } from "vitest";
import {
  type Envelope,
  MAX_KEPT_BYTES_PER_SESSION,
  MAX_KEPT_PER_SESSION,
  Outbox,
  type OutboxItem,
  Subscription,
  envelopeOf,
  idAfter,
} from "../../src/session/outbox.js";
import { ReplayBuffer } from "../../src/session/replay-buffer.js";

const delivery = (text: string, from = "agent"): OutboxItem => ({ type: "delivery", from, text });
const notice = (n: number): OutboxItem => ({ type: "notice", event: "tick", data: { n } });

/** Everything queued for a subscription, as a client that reads would take it. */
function takeAll(subscription: Pick<Subscription, "take">): OutboxItem[] {
  const items: OutboxItem[] = [];
  for (let item = subscription.take(); item; item = subscription.take()) items.push(item);
  return items;
}

function recording() {
  const dropped: [string, number][] = [];
  const overflowed: [string, number, number][] = [];
  const outbox = new Outbox(
    { dropped: (key, n) => dropped.push([key, n]), overflowed: (key, items, bytes) => overflowed.push([key, items, bytes]) },
    { maxItems: 3, maxBytes: 100 },
  );
  return { outbox, dropped, overflowed };
}

describe("outbox", () => {
  it("sends to open streams and keeps nothing then", async () => {
    const outbox = new Outbox();
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("a"), true);
    outbox.publish("other", delivery("b"), true);
    expect(takeAll(stream)).toEqual([delivery("a")]);
    expect(await outbox.drain("s")).toEqual([]);
    stream.close();
    expect(outbox.watched("s")).toBe(false);
    expect(await outbox.drain("other")).toEqual([{ from: "agent", text: "b" }]);
  });

  it("keeps only deliveries marked keep (never notices), hands them out once, oldest first", async () => {
    const outbox = new Outbox();
    outbox.publish("s", delivery("in-band"));
    outbox.publish("s", { type: "notice", event: "subagent.start", data: { id: "x", label: "l", agent: "main" } }, true);
    outbox.publish("s", delivery("1"), true);
    outbox.publish("s", delivery("2"), true);
    expect((await outbox.drain("s")).map((d) => d.text)).toEqual(["1", "2"]);
    expect(await outbox.drain("s")).toEqual([]);
  });

  it("a stream that opens gets what was kept first", async () => {
    const outbox = new Outbox();
    outbox.publish("s", delivery("kept"), true);
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("live"), true);
    expect(takeAll(stream).map((i) => (i as { text: string }).text)).toEqual(["kept", "live"]);
  });

  it("bounds what it keeps per session, in items and bytes, dropping the oldest and saying so", async () => {
    const dropped: [string, number][] = [];
    const outbox = new Outbox({ dropped: (key, n) => dropped.push([key, n]) });
    for (let i = 0; i < MAX_KEPT_PER_SESSION + 3; i++) outbox.publish("s", delivery(`${i}`), true);
    const kept = await outbox.drain("s");
    expect(kept).toHaveLength(MAX_KEPT_PER_SESSION);
    expect(kept[0]!.text).toBe("3");
    expect(dropped).toEqual([
      ["s", 1],
      ["s", 1],
      ["s", 1],
    ]);
    const big = "x".repeat(MAX_KEPT_BYTES_PER_SESSION / 2 - 100);
    for (const n of [1, 2, 3]) outbox.publish("b", delivery(`${n}${big}`), true);
    expect((await outbox.drain("b")).map((d) => d.text[0])).toEqual(["2", "3"]);
    outbox.publish("b", delivery(big + big + big), true);
    expect(await outbox.drain("b")).toHaveLength(1);
  });
});

describe("a stream's queue", () => {
  it("a stream that stops reading is closed once its queue is full (items); what it held is kept for the session, notices dropped", async () => {
    const { outbox, dropped, overflowed } = recording();
    const stream = outbox.subscribe("s");
    let cut = 0;
    stream.onOverflow = () => cut++;
    outbox.publish("s", delivery("1"), true);
    outbox.publish("s", notice(1), true);
    outbox.publish("s", delivery("2"), true);
    expect(stream.size).toBe(3);
    outbox.publish("s", delivery("3"), true);
    expect(cut).toBe(1);
    expect(stream.ended).toBe(true);
    expect(stream.take()).toBeUndefined();
    expect(outbox.watched("s")).toBe(false);
    expect(overflowed).toEqual([["s", 3, 6 + (4 + 7) + 6]]);
    expect((await outbox.drain("s")).map((d) => d.text)).toEqual(["1", "2", "3"]);
    expect(dropped).toEqual([]);
  });

  it("the queue is bounded in bytes too; one item of any size fits an empty queue", async () => {
    const { outbox } = recording();
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("x".repeat(500)), true);
    expect(stream.size).toBe(1);
    expect(takeAll(stream)).toHaveLength(1);
    outbox.publish("s", delivery("y".repeat(60)), true);
    outbox.publish("s", delivery("z".repeat(60)), true);
    expect(stream.ended).toBe(true);
    expect((await outbox.drain("s")).map((d) => d.text[0])).toEqual(["y", "z"]);
  });

  it("a reading stream is never closed, however much passes through it", async () => {
    const { outbox, overflowed } = recording();
    const stream = outbox.subscribe("s");
    const got: OutboxItem[] = [];
    for (let i = 0; i < 1000; i++) {
      outbox.publish("s", delivery(`${i}`), true);
      if (i % 3 === 2) got.push(...takeAll(stream));
    }
    got.push(...takeAll(stream));
    expect(got).toHaveLength(1000);
    expect(overflowed).toEqual([]);
    expect(await outbox.drain("s")).toEqual([]);
  });

  it("what another stream showed is not kept again when a stuck stream is closed; what no stream showed is", async () => {
    const { outbox } = recording();
    const reader = outbox.subscribe("s");
    const stuck = outbox.subscribe("s");
    outbox.publish("s", delivery("1"), true);
    outbox.publish("s", delivery("2"), true);
    expect(reader.take()).toEqual(delivery("1"));
    outbox.publish("s", delivery("3"), true);
    outbox.publish("s", delivery("4"), true);
    expect(stuck.ended).toBe(true);
    // 2, 3 and 4 are still queued for the reader: nothing is kept while it may show them.
    expect(await outbox.drain("s")).toEqual([]);
    reader.close();
    expect((await outbox.drain("s")).map((d) => d.text)).toEqual(["2", "3", "4"]);
  });

  it("a client that leaves gives back what it had not taken; deliveries of a chat response are not kept (the response has them)", async () => {
    const outbox = new Outbox();
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("background"), true);
    outbox.publish("s", delivery("in the response"));
    stream.close();
    expect(await outbox.drain("s")).toEqual([{ from: "agent", text: "background" }]);
  });

  it("a finished stream (the gateway stopping) takes nothing more but still hands out what it holds", async () => {
    const outbox = new Outbox();
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("1"), true);
    let woke = false;
    const change = stream.changed().then(() => (woke = true));
    stream.finish();
    outbox.publish("s", delivery("2"), true);
    expect(stream.ended).toBe(false);
    expect(stream.finished).toBe(true);
    expect(takeAll(stream)).toEqual([delivery("1")]);
    expect(stream.ended).toBe(true);
    await change;
    expect(woke).toBe(true);
    expect(await outbox.drain("s")).toEqual([{ from: "agent", text: "2" }]);
  });
});

describe("event ids and resuming", () => {
  it("ids grow across sessions and restarts: they start at a thousand times the clock's milliseconds", () => {
    const outbox = new Outbox({}, { now: () => 1_700_000_000_000 });
    const a = outbox.subscribe("a");
    const b = outbox.subscribe("b");
    outbox.publish("a", delivery("1"));
    outbox.publish("b", delivery("2"));
    a.take();
    b.take();
    expect([a.lastId, b.lastId]).toEqual(["1700000000000000", "1700000000000001"]);
    const restarted = new Outbox({}, { now: () => 1_700_000_000_001 });
    const c = restarted.subscribe("a");
    restarted.publish("a", delivery("3"));
    c.take();
    expect(idAfter(c.lastId!, a.lastId!)).toBe(true);
  });

  it("idAfter orders ids by number, and an id sent while the database was down (a dot) right after the one before it", () => {
    expect(idAfter("10", "9")).toBe(true);
    expect(idAfter("9", "10")).toBe(false);
    expect(idAfter("10", "10")).toBe(false);
    expect(idAfter("10.2", "10.1")).toBe(true);
    expect(idAfter("10.1", "10")).toBe(true);
    expect(idAfter("11", "10.5")).toBe(true);
    expect(idAfter("10", "10.1")).toBe(false);
  });

  it("a resumed stream gets what was kept and what came after its id, each once and in order; a fresh one only what was kept", () => {
    const outbox = new Outbox();
    const first = outbox.subscribe("s");
    outbox.publish("s", delivery("seen"), true);
    first.take();
    const seen = first.lastId!;
    first.close();
    outbox.publish("s", notice(1));
    outbox.publish("s", delivery("kept"), true);
    const fresh = outbox.subscribe("s");
    expect(takeAll(fresh)).toEqual([delivery("kept")]);
    fresh.close();
    outbox.publish("s", delivery("kept again"), true);
    const resumed = outbox.subscribe("s", { after: seen });
    expect(takeAll(resumed)).toEqual([notice(1), delivery("kept"), delivery("kept again")]);
  });

  it("a chat channel's feed takes what was kept but gives its session no replay", async () => {
    const outbox = new Outbox();
    const got: OutboxItem[] = [];
    const stop = outbox.feed("chat", (item) => got.push(item));
    outbox.publish("chat", delivery("x"));
    await Promise.resolve();
    expect(outbox.replayed).toEqual({ items: 0, bytes: 0, sessions: 0 });
    stop();
    outbox.subscribe("web").close();
    outbox.publish("web", delivery("y"));
    expect(outbox.replayed).toMatchObject({ items: 1, sessions: 1 });
  });

  it("/clear forgets the session's replay too", async () => {
    const outbox = new Outbox();
    const stream = outbox.subscribe("s");
    outbox.publish("s", delivery("before"));
    stream.take();
    const id = stream.lastId!;
    stream.close();
    outbox.publish("s", delivery("missed"));
    await outbox.clearSession("s");
    expect(takeAll(outbox.subscribe("s", { after: id }))).toEqual([]);
  });
});

describe("the replay buffer", () => {
  const entry = (id: number, bytes = 1) => ({ id: String(id), item: delivery(String(id)), bytes });
  const limits = { perSession: { maxItems: 3, maxBytes: 100 }, total: { maxItems: 5, maxBytes: 1_000 }, sessions: 2 };

  it("holds only watched sessions, each within its bounds (the newest held whatever its size)", () => {
    const replay = new ReplayBuffer(limits);
    replay.record("unwatched", entry(1));
    expect(replay.size).toEqual({ items: 0, bytes: 0, sessions: 0 });
    replay.watch("s");
    for (const id of [1, 2, 3, 4]) replay.record("s", entry(id));
    expect(replay.since("s", "0").map((e) => e.id)).toEqual(["2", "3", "4"]);
    replay.record("s", entry(5, 500));
    expect(replay.since("s", "0").map((e) => e.id)).toEqual(["5"]);
    expect(replay.since("s", "4").map((e) => e.id)).toEqual(["5"]);
  });

  it("in all, the sessions touched longest ago give up their oldest items first, then the sessions themselves", () => {
    const replay = new ReplayBuffer(limits);
    replay.watch("old");
    for (const id of [1, 2, 3]) replay.record("old", entry(id));
    replay.watch("new");
    for (const id of [4, 5, 6]) replay.record("new", entry(id));
    // Six items, five held in all: the oldest of the session touched longest ago went.
    expect(replay.since("old", "0").map((e) => e.id)).toEqual(["2", "3"]);
    expect(replay.since("new", "0").map((e) => e.id)).toEqual(["4", "5", "6"]);
    replay.watch("third");
    expect(replay.size.sessions).toBe(2);
    expect(replay.since("old", "0")).toEqual([]);
    replay.forget("new");
    expect(replay.size).toEqual({ items: 0, bytes: 0, sessions: 1 });
  });
});

describe("a stream catching up (the outbox reads what it starts with)", () => {
  const envelope = (id: string, text = id, keep = false): Envelope => envelopeOf(id, delivery(text), keep);
  const subscription = (given: Envelope[][] = []) =>
    new Subscription(
      "s",
      { maxItems: 10, maxBytes: 1_000 },
      () => {},
      (_s, left) => given.push([...left]),
      true,
    );

  it("what arrives meanwhile waits, then comes after what it starts with, without the items it starts with already", () => {
    const stream = subscription();
    stream.offer(envelope("5"));
    stream.offer(envelope("6"));
    expect(stream.take()).toBeUndefined();
    expect(stream.catchUp([envelope("3"), envelope("5")])).toBe(true);
    expect(takeAll(stream).map((i) => (i as { text: string }).text)).toEqual(["3", "5", "6"]);
    expect(stream.lastId).toBe("6");
  });

  it("a stream closed while catching up gives back what arrived, and refuses what it would have started with", () => {
    const given: Envelope[][] = [];
    const stream = subscription(given);
    const arrived = envelope("7", "arrived", true);
    stream.offer(arrived);
    stream.close();
    expect(given).toEqual([[arrived]]);
    expect(arrived.holders).toBe(0);
    expect(stream.catchUp([envelope("1")])).toBe(false);
  });

  it("the same delivery read twice (once as it was, once held for the session) is queued once; never shown, the held copy is given back", () => {
    const given: Envelope[][] = [];
    const stream = subscription(given);
    const asItWas = envelope("4", "d", false);
    stream.catchUp([asItWas]);
    const held = envelope("4", "d", true);
    expect(stream.offer(held)).toBe(true);
    expect(stream.size).toBe(1);
    // Counted as held through its twin: its outbox keeps nothing for it.
    expect(held.holders).toBe(1);
    stream.close();
    expect(given.at(-1)!.map((e) => [e.id, e.keep, e.holders])).toEqual([["4", true, 0]]);
  });

  it("a stream finished while catching up (the gateway stopping) still hands out what it starts with, then ends", () => {
    const stream = subscription();
    stream.finish();
    expect(stream.ended).toBe(false);
    stream.catchUp([envelope("1")]);
    expect(takeAll(stream)).toHaveLength(1);
    expect(stream.ended).toBe(true);
  });
});
