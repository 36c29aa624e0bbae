import { describe, expect, it } from "vitest";
import { MAX_KEPT_BYTES_PER_SESSION, MAX_KEPT_PER_SESSION, Outbox, type OutboxItem, type Subscription } from "../../src/session/outbox.js";

const delivery = (text: string, from = "agent"): OutboxItem => ({ type: "delivery", from, text });
const notice = (n: number): OutboxItem => ({ type: "notice", event: "tick", data: { n } });

/** Everything queued for a subscription, as a client that reads would take it. */
function takeAll(subscription: Subscription): OutboxItem[] {
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
