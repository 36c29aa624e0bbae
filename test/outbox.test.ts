import { describe, expect, it } from "vitest";
import { MAX_KEPT_PER_SESSION, Outbox, type OutboxItem } from "../src/runtime/outbox.js";

const delivery = (text: string): OutboxItem => ({ type: "delivery", from: "agent", text });

describe("outbox", () => {
  it("sends to open streams and keeps nothing then", () => {
    const outbox = new Outbox();
    const got: OutboxItem[] = [];
    const stop = outbox.subscribe("s", (i) => got.push(i));
    outbox.publish("s", delivery("a"), true);
    outbox.publish("other", delivery("b"), true);
    expect(got).toEqual([delivery("a")]);
    expect(outbox.drain("s")).toEqual([]);
    stop();
    expect(outbox.watched("s")).toBe(false);
    expect(outbox.drain("other")).toEqual([{ from: "agent", text: "b" }]);
  });

  it("keeps only deliveries marked keep (never notices), hands them out once, oldest first", () => {
    const outbox = new Outbox();
    outbox.publish("s", delivery("in-band"));
    outbox.publish("s", { type: "notice", event: "subagent.start", data: { id: "x", label: "l", agent: "main" } }, true);
    outbox.publish("s", delivery("1"), true);
    outbox.publish("s", delivery("2"), true);
    expect(outbox.drain("s").map((d) => d.text)).toEqual(["1", "2"]);
    expect(outbox.drain("s")).toEqual([]);
  });

  it("a stream that opens gets what was kept first", () => {
    const outbox = new Outbox();
    outbox.publish("s", delivery("kept"), true);
    const got: OutboxItem[] = [];
    outbox.subscribe("s", (i) => got.push(i));
    outbox.publish("s", delivery("live"), true);
    expect(got.map((i) => (i as { text: string }).text)).toEqual(["kept", "live"]);
  });

  it("bounds what it keeps per session, dropping the oldest and saying so", () => {
    const dropped: [string, number][] = [];
    const outbox = new Outbox((key, n) => dropped.push([key, n]));
    for (let i = 0; i < MAX_KEPT_PER_SESSION + 3; i++) outbox.publish("s", delivery(`${i}`), true);
    const kept = outbox.drain("s");
    expect(kept).toHaveLength(MAX_KEPT_PER_SESSION);
    expect(kept[0]!.text).toBe("3");
    expect(dropped).toEqual([
      ["s", 1],
      ["s", 1],
      ["s", 1],
    ]);
  });
});
