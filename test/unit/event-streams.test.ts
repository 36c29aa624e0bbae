import { describe, expect, it } from "vitest";
import type { Feature, FeatureHost } from "../../src/port/feature.js";
import { STREAM_QUEUE } from "../../src/session/outbox.js";
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
    expect(await next).toBe('event: delivery\ndata: {"from":"agent","text":"read"}\n\n');
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
});
