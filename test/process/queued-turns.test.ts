/**
 * The red team's repro of queued input held after its clients left (500
 * queued 1 MB messages on one session held +587 MiB), against the real
 * gateway process on its default limits: the queue is bounded in bytes,
 * and a waiting turn whose client goes away is taken out and let go of.
 */
import { request } from "node:http";
import { describe, expect, it, onTestFinished } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { eventually, waitFor, within } from "../support/wait.js";

const MB = 1_000_000;

/** A POST /v1/chat on a connection of its own, which the test can cut (the client going away); resolves with the answer, if one comes. */
function send(url: string, message: string) {
  const body = JSON.stringify({ message, session: "q" });
  let cut!: () => void;
  const answer = new Promise<{ status: number; body: string } | "cut">((resolve) => {
    const req = request(
      `${url}/v1/chat`,
      { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", () => resolve("cut"));
    cut = () => req.destroy();
    req.end(body);
  });
  return { answer, cut };
}

interface Status {
  sessions: { queued_turns: number; queued_bytes: number };
}

describe("queued input on one session (needs dist/)", () => {
  it("1 MB messages queued behind a running turn: past the default byte bound 429 naming it; those whose clients left are taken out unrun and let go of", {
    timeout: 60_000,
  }, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = await FakeModelServer.start(async (_request, index) => {
      if (index === 0) await held;
      return textCompletion(index === 0 ? "first done" : "after done");
    });
    onTestFinished(() => model.close());
    const dir = writeProject({ config: { ...openaiConfig(model.url), gateway: { port: 0 } } });
    const gateway = picoclawProcess(["gateway"], dir);
    await waitFor("the gateway's listening line", () => /listening on (http:\/\/\S+)/.test(gateway.output()), { instead: () => gateway.output() });
    const url = /listening on (http:\/\/\S+)/.exec(gateway.output())![1]!;
    const status = async () => ((await (await fetch(`${url}/v1/status`)).json()) as Status).sessions;

    const first = send(url, "first");
    await waitFor("the model's first request", () => model.requests.length === 1);
    // gateway.limits.max_queued_bytes is 4 MiB by default: four of these wait, the rest are refused at once (whichever come last).
    const queued = Array.from({ length: 6 }, (_, i) => {
      const q = send(url, `${i}`.repeat(MB));
      const entry = { ...q, settled: undefined as { status: number; body: string } | "cut" | undefined };
      void q.answer.then((answer) => (entry.settled = answer));
      return entry;
    });
    await waitFor("two of the six to be answered", () => queued.filter((q) => q.settled).length === 2, {
      instead: () => `${queued.filter((q) => q.settled).length} were`,
    });
    for (const q of queued.filter((q) => q.settled)) {
      const answer = q.settled as { status: number; body: string };
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body).error).toMatchObject({
        code: "too_many_queued_turns",
        message: expect.stringContaining("gateway.limits.max_queued_bytes"),
      });
    }
    await eventually(async () => expect(await status()).toMatchObject({ queued_turns: 4, queued_bytes: 4 * MB }));

    // The waiting clients go away: their turns leave the queue while the first still runs.
    for (const q of queued.filter((q) => !q.settled)) q.cut();
    await eventually(async () => expect(await status()).toMatchObject({ queued_turns: 0, queued_bytes: 0 }));

    release();
    const answered = await within("the first turn's answer", first.answer);
    expect(answered).toMatchObject({ status: 200 });
    const after = await within("a turn after them", send(url, "after").answer);
    expect(JSON.parse((after as { body: string }).body).reply).toBe("after done");
    // None of the departed turns ever reached the model.
    expect(model.requests).toHaveLength(2);
    const history = (await (await fetch(`${url}/v1/sessions/agent:main:http:q/history`)).json()) as { messages: { role: string; content: string }[] };
    expect(history.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first", "after"]);
    gateway.child.kill("SIGTERM");
    expect(await within("the gateway to exit", gateway.exited)).toBe(0);
  });
});
