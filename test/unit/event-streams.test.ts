import { describe, expect, it } from "vitest";
import type { Feature, FeatureHost } from "../../src/port/feature.js";
import { REPLAY_LIMITS, STREAM_QUEUE } from "../../src/session/outbox.js";
import { harness } from "../support/project.js";
import { sseReader } from "../support/sse.js";

/**
 * `GET /v1/sessions/<key>/events`, driven in-process: the test is the
 * client, and decides when (and whether) it reads.
 */

const KEY = "agent:main:http:s";

/** A gateway whose test holds the feature host, to deliver and notify as background work does. */
function gateway() {
  let host: FeatureHost | undefined;
  const capture: Feature = {
    name: "capture",
    needs: ["deliverLater", "notify"],
    setup: (given) => {
      host = given;
      return {};
    },
  };
  const h = harness({ features: [capture] });
  const deliver = (text: string) => host!.deliverLater("main", KEY, { from: "agent", text });
  const notify = (n: number) => host!.notify(KEY, "tick", { n });
  return { h, deliver, notify };
}

const warnings = (h: ReturnType<typeof harness>) => h.logger.lines.filter((l) => l.level === "warn").map((l) => l.message);

describe("event streams", () => {
  it("a client that stops reading is cut once its queue is full; its deliveries are kept and come with the next chat response", async () => {
    const { h, deliver, notify } = gateway();
    const res = await h.request(`/v1/sessions/${KEY}/events`);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    // A proxy in front (nginx) must pass it on unbuffered.
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    // The client never reads: every item waits in the stream's queue until it is full.
    for (let n = 0; n < 10; n++) notify(n);
    for (let n = 0; n < 300; n++) deliver(`d${n}`);
    // UTF-8 bytes queued: 10 notices ("tick" and {"n":0}), then deliveries d0 to d245 ("agent" and the text).
    const queuedBytes = 10 * (4 + 7) + Array.from({ length: 246 }, (_, n) => 5 + `d${n}`.length).reduce((a, b) => a + b, 0);
    await expect(res.body!.getReader().read()).rejects.toThrow("the client stopped reading the event stream");
    expect(warnings(h)[0]).toBe(
      `closed an event stream of ${KEY}: its client stopped reading (${STREAM_QUEUE.maxItems} item(s), ${queuedBytes} bytes queued); its deliveries are kept`,
    );
    // Kept for the session, within its bounds (the oldest dropped, and the log says how many): nothing lost silently.
    const dropped = warnings(h)
      .slice(1)
      .map((line) => Number(/^dropped (\d+) undelivered message\(s\) of agent:main:http:s: nobody collected them$/.exec(line)![1]));
    expect(dropped.reduce((a, b) => a + b, 0)).toBe(200);
    const { json } = await h.chat({ message: "hello", session: "s" });
    expect(json.delivered.slice(0, -1)).toEqual(Array.from({ length: 100 }, (_, i) => ({ from: "agent", text: `d${200 + i}` })));
    expect(json.delivered).toHaveLength(101);
  });

  it("a client that reads gets every item in order, its queue never fills, and nothing is kept twice", async () => {
    const { h, deliver } = gateway();
    const stream = sseReader(await h.request(`/v1/sessions/${KEY}/events`));
    for (let batch = 0; batch < 10; batch++) {
      for (let n = 0; n < 100; n++) deliver(`${batch}.${n}`);
      for (let n = 0; n < 100; n++) expect(await stream.next()).toEqual({ event: "delivery", data: { from: "agent", text: `${batch}.${n}` } });
    }
    expect(warnings(h)).toEqual([]);
    await stream.close();
    expect(await h.runtime.takeDeliveries(KEY)).toEqual([]);
  });

  it("a client that leaves gives back what it had not read: the next stream gets it", async () => {
    const { h, deliver } = gateway();
    const reader = (await h.request(`/v1/sessions/${KEY}/events`)).body!.getReader();
    const text = async () => new TextDecoder().decode((await reader.read()).value);
    expect(await text()).toBe(": connected\n\n");
    const next = text();
    deliver("read");
    expect(await next).toMatch(/^id: \d+\nevent: delivery\ndata: \{"from":"agent","text":"read"\}\n\n$/);
    // Not read: they wait in the stream's queue, and go back to the session when the client leaves.
    deliver("unread 1");
    deliver("unread 2");
    await reader.cancel();
    const second = sseReader(await h.request(`/v1/sessions/${KEY}/events`));
    expect((await second.next()).data.text).toBe("unread 1");
    expect((await second.next()).data.text).toBe("unread 2");
    await second.close();
    expect(await h.runtime.takeDeliveries(KEY)).toEqual([]);
  });

  it("every event carries an id, growing within the session", async () => {
    const { h, deliver, notify } = gateway();
    const stream = sseReader(await h.request(`/v1/sessions/${KEY}/events`));
    deliver("one");
    notify(1);
    await h.chat({ message: "hello", session: "s" });
    await stream.until("turn.end");
    expect(stream.events.map((e) => e.event)).toEqual(["delivery", "tick", "turn.start", "delivery", "turn.end"]);
    const ids = stream.ids.map((id) => Number(id));
    expect(ids.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    await stream.close();
  });
});

describe("resuming an event stream (Last-Event-ID)", () => {
  const resume = (h: ReturnType<typeof harness>, id: string | undefined) =>
    h.request(`/v1/sessions/${KEY}/events`, id === undefined ? {} : { headers: { "last-event-id": id } });

  it("a client that comes back with the last id it got is handed what it missed, even what another client's stream took meanwhile", async () => {
    const { h, deliver, notify } = gateway();
    const first = sseReader(await resume(h, undefined));
    deliver("seen");
    await first.next();
    const seen = first.readId!;
    await first.close();
    // While it is away: a notice, and a delivery that another client's stream takes.
    notify(7);
    deliver("missed");
    const other = sseReader(await resume(h, undefined));
    expect((await other.next()).data).toEqual({ from: "agent", text: "missed" });
    await other.close();
    const back = sseReader(await resume(h, seen));
    expect(await back.next()).toEqual({ event: "tick", data: { n: 7 } });
    expect(await back.next()).toEqual({ event: "delivery", data: { from: "agent", text: "missed" } });
    // What it had already got is not sent again, and the ids go on from there.
    expect(back.events.map((e) => e.data.text)).not.toContain("seen");
    expect(Number(back.ids[0])).toBeGreaterThan(Number(seen));
    deliver("live");
    expect((await back.next()).data.text).toBe("live");
    await back.close();
    // Nothing was kept twice: the next chat response has no delivery from before.
    const { json } = await h.chat({ message: "SAY x", session: "s" });
    expect(json.delivered).toHaveLength(1);
  });

  it("a reader that goes away after a delivery was sent to it gets it again when it comes back from the id before", async () => {
    const { h, deliver } = gateway();
    const reader = sseReader(await resume(h, undefined));
    deliver("before");
    await reader.next();
    const before = reader.readId!;
    deliver("the result");
    // Written to it, so counted as shown: its connection went before the client read it.
    expect((await reader.next()).data.text).toBe("the result");
    await reader.close();
    expect(await h.runtime.takeDeliveries(KEY)).toEqual([]);
    const back = sseReader(await resume(h, before));
    expect(await back.next()).toEqual({ event: "delivery", data: { from: "agent", text: "the result" } });
    await back.close();
  });

  it("kept deliveries come with a resumed stream too, once, in the order they were sent", async () => {
    const { h, deliver } = gateway();
    const reader = sseReader(await resume(h, undefined));
    deliver("a");
    await reader.next();
    const last = reader.readId!;
    await reader.close();
    deliver("b");
    deliver("c");
    const back = sseReader(await resume(h, last));
    expect((await back.next()).data.text).toBe("b");
    expect((await back.next()).data.text).toBe("c");
    await back.close();
    expect(await h.runtime.takeDeliveries(KEY)).toEqual([]);
  });

  it("an id the gateway never gives is a 400 naming Last-Event-ID, and no stream opens", async () => {
    const { h } = gateway();
    const res = await resume(h, "abc");
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message).toBe('Last-Event-ID: expected the id of an event of this stream (digits), got "abc"');
  });

  it("the replay is bounded: a client that was away too long gets what is still held, the newest", async () => {
    const { h, deliver } = gateway();
    const reader = sseReader(await resume(h, undefined));
    deliver("first");
    await reader.next();
    const first = reader.readId!;
    for (let n = 0; n < REPLAY_LIMITS.perSession.maxItems + 10; n++) deliver(`d${n}`);
    for (let n = 0; n < REPLAY_LIMITS.perSession.maxItems + 10; n++) await reader.next();
    await reader.close();
    const back = sseReader(await resume(h, first));
    const got: string[] = [];
    for (let n = 0; n < REPLAY_LIMITS.perSession.maxItems; n++) got.push((await back.next()).data.text);
    expect(got[0]).toBe("d10");
    expect(got.at(-1)).toBe(`d${REPLAY_LIMITS.perSession.maxItems + 9}`);
    await back.close();
  });
});
