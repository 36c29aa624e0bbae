// biome-ignore-all lint/suspicious/noExplicitAny: the routes' JSON, read as the tests check it
/**
 * Retries that never run a turn twice, on the OpenAI-compatible route: a
 * repeat of a POST with the same Idempotency-Key gets the first answer
 * (a stream replayed), `409` with `retry-after` while the first still runs;
 * a first request whose client left is forgotten, so its retry runs. A
 * model's 4xx answers `x-should-retry: false`; OpenAI's paths this gateway
 * does not serve are 404 in OpenAI's error shape.
 */
import { describe, expect, it } from "vitest";
import { harness, jsonOf } from "../support/project.js";
import { WireModel, wireConfig } from "../support/wire-model.js";
import { eventually, waitFor, within } from "../support/wait.js";
import { parsePrometheus } from "../support/prometheus.js";

function gateway() {
  const model = new WireModel();
  const h = harness({ config: wireConfig(), models: { fetch: model.fetch } });
  const turns: string[] = [];
  h.runtime.on("turn.start", (e) => turns.push(e.turnId));
  const post = (body: Record<string, unknown>, key?: string, signal?: AbortSignal) =>
    h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }], ...body }),
      ...(signal ? { signal } : {}),
    });
  return { h, model, turns, post };
}

describe("Idempotency-Key on POST /v1/chat/completions", () => {
  it("a repeat gets the first answer, replayed, and no second turn; another key runs its own", async () => {
    const { model, turns, post } = gateway();
    const first = post({}, "key-1");
    (await model.call(1)).text("only once");
    model.calls[0]!.finish();
    const answer = await jsonOf(await first);
    expect(answer.choices[0].message.content).toBe("only once");
    const again = await post({}, "key-1");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await jsonOf(again)).toEqual(answer);
    expect(turns).toHaveLength(1);
    const other = post({}, "key-2");
    (await model.call(2)).text("second");
    model.calls[1]!.finish();
    expect((await jsonOf(await other)).choices[0].message.content).toBe("second");
    expect(turns).toHaveLength(2);
  });

  it("while the first still runs, a repeat is 409 with retry-after; then the answer", async () => {
    const { model, turns, post } = gateway();
    const first = post({}, "slow");
    await model.call(1);
    const early = await post({}, "slow");
    expect(early.status).toBe(409);
    expect(early.headers.get("retry-after")).toBe("1");
    expect((await jsonOf(early)).error).toMatchObject({ code: "idempotency_conflict", type: "invalid_request_error" });
    model.calls[0]!.text("done");
    model.calls[0]!.finish();
    await first;
    expect((await jsonOf(await post({}, "slow"))).choices[0].message.content).toBe("done");
    expect(turns).toHaveLength(1);
  });

  it("a streamed answer is replayed whole", async () => {
    const { model, turns, post } = gateway();
    const first = post({ stream: true }, "streamed");
    const call = await model.call(1);
    call.text("stre");
    call.text("amed");
    call.finish();
    const text = await (await first).text();
    expect(text).toContain("[DONE]");
    const replay = await post({ stream: true }, "streamed");
    expect(replay.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await replay.text()).toBe(text);
    expect(turns).toHaveLength(1);
  });

  it("a streamed answer's replay is an open event stream to the metrics until it is read", async () => {
    const { h, model, post } = gateway();
    const open = async () => parsePrometheus(await (await h.request("/metrics")).text()).value("picoclaw_sse_streams_open");
    const first = post({ stream: true }, "counted");
    (await model.call(1)).text("streamed");
    model.calls[0]!.finish();
    await (await first).text();
    expect(await open()).toBe(0);
    const replay = await post({ stream: true }, "counted");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await open()).toBe(1);
    await replay.text();
    await eventually(async () => expect(await open()).toBe(0));
  });

  it("an answer that says to try again (the model failing: 502) is not kept for the key: its retry runs a turn and gets the answer", async () => {
    let failing = true;
    const h = harness({
      config: wireConfig(),
      models: {
        sleep: async () => {},
        fetch: async () =>
          failing
            ? new Response(JSON.stringify({ error: { message: "overloaded" } }), { status: 503, headers: { "content-type": "application/json" } })
            : new Response(
                JSON.stringify({
                  id: "c1",
                  object: "chat.completion",
                  created: 0,
                  model: "m",
                  choices: [{ index: 0, message: { role: "assistant", content: "now it works" }, finish_reason: "stop" }],
                }),
                { status: 200, headers: { "content-type": "application/json" } },
              ),
      },
    });
    const post = () =>
      h.request("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "flaky" },
        body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }] }),
      });
    const failed = await post();
    expect(failed.status).toBeGreaterThanOrEqual(500);
    failing = false;
    const retried = await post();
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect((await jsonOf(retried)).choices[0].message.content).toBe("now it works");
    // And a success is kept: the next repeat is replayed.
    expect((await post()).headers.get("idempotent-replayed")).toBe("true");
  });

  it("a first request whose client left before the answer is forgotten: the retry runs", async () => {
    const { model, turns, post } = gateway();
    const gone = new AbortController();
    const first = post({}, "left", gone.signal).catch(() => "cut off");
    await model.call(1);
    gone.abort();
    await first;
    await waitFor("the first turn to end", () => model.calls[0]!.aborted);
    const retry = post({}, "left");
    (await model.call(2)).text("again");
    model.calls[1]!.finish();
    expect((await jsonOf(await within("the retry", retry))).choices[0].message.content).toBe("again");
    expect(turns).toHaveLength(2);
  });

  it("a key sent again with another body is 422 idempotency_key_reused, while the first runs and after it: no turn, no other request's answer", async () => {
    const { model, turns, post } = gateway();
    const first = post({}, "reused");
    await model.call(1);
    const whileRunning = await post({ messages: [{ role: "user", content: "something else" }] }, "reused");
    expect(whileRunning.status).toBe(422);
    expect(whileRunning.headers.get("x-should-retry")).toBe("false");
    expect((await jsonOf(whileRunning)).error).toMatchObject({ code: "idempotency_key_reused", type: "invalid_request_error" });
    model.calls[0]!.text("the first");
    model.calls[0]!.finish();
    await first;
    const after = await post({ temperature: 0.5 }, "reused");
    expect(after.status).toBe(422);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.stringify(await jsonOf(after))).not.toContain("the first");
    expect(turns).toHaveLength(1);
    // The same body with the key is still the first answer, replayed.
    const same = await post({}, "reused");
    expect(same.headers.get("idempotent-replayed")).toBe("true");
    expect((await jsonOf(same)).choices[0].message.content).toBe("the first");
  });
});

describe("retry hints and OpenAI's error shape", () => {
  it("a model's 400 is a 400 on the OpenAI surface (no SDK retries it), with x-should-retry: false; /v1/chat keeps its 502", async () => {
    const h = harness({
      config: wireConfig(),
      models: {
        fetch: async () =>
          new Response(JSON.stringify({ error: { message: "bad request" } }), { status: 400, headers: { "content-type": "application/json" } }),
      },
    });
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect((await jsonOf(res)).error).toMatchObject({ code: "model_bad_request", type: "invalid_request_error" });
    const chat = await h.chat({ message: "hi" });
    expect(chat.status).toBe(502);
  });

  it("OpenAI's paths this gateway does not serve are 404 in OpenAI's shape", async () => {
    const h = harness({});
    for (const path of ["/v1/embeddings", "/v1/completions"]) {
      const res = await h.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status, path).toBe(404);
      expect((await jsonOf(res)).error, path).toMatchObject({ type: "invalid_request_error", code: "not_found" });
    }
    const stored = await h.request("/v1/responses/resp_none");
    expect(stored.status).toBe(404);
    expect((await jsonOf(stored)).error).toMatchObject({ type: "invalid_request_error", code: "not_found" });
    expect((await jsonOf(await h.request("/v1/nothing-here"))).error).toEqual({ code: "not_found", message: "no route for GET /v1/nothing-here" });
  });
});
