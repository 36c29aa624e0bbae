import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { bootstrap } from "../src/bootstrap.js";
import { startGateway } from "../src/gateway/server.js";
import { silentLogger } from "../src/log.js";
import { benchProject, fmt, percentile, report } from "./support.js";

/**
 * Time to first token: from sending a request to reading the first piece
 * of the model's text, through the gateway (`POST /v1/chat` with `stream`,
 * and `POST /v1/chat/completions` with `stream`) versus the same fake model
 * streamed directly, in the same run, interleaved. The fake model streams
 * an answer in OpenAI's wire format, its first piece at once, the rest
 * after `REST_MS` (so the first piece can only arrive on its own).
 *
 * Target: gateway p50 ≤ 1.2 × direct p50 + 2 ms.
 */

const RUNS = Number(process.env.BENCH_TTFT_RUNS ?? 300);
const WARMUP = 50;
const REST_MS = 5;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", created: 0, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A fake model that streams "Hello" at once, then ", world." and the end after REST_MS. */
async function streamingModel(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "Hello" }));
      setTimeout(() => res.end(`${chunk({ content: ", world." })}${chunk({}, "stop")}data: [DONE]\n\n`), REST_MS);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Milliseconds from sending `body` to `url` until the response's text holds `marker`; the rest is read and dropped. */
async function firstToken(url: string, body: unknown, marker: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let at = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (Number.isNaN(at) && text.includes(marker)) at = performance.now() - started;
  }
  if (Number.isNaN(at)) throw new Error(`no first token from ${url}: ${text.slice(0, 300)}`);
  return at;
}

export async function benchTtft(): Promise<Record<string, number>> {
  const model = await streamingModel();
  const project = benchProject(model.url);
  const { runtime } = bootstrap(project.loaded, { logger: silentLogger });
  const gateway = await startGateway({ runtime, logger: silentLogger, host: "127.0.0.1", port: 0, token: "" });
  let session = 0;
  const direct = () =>
    firstToken(`${model.url}/chat/completions`, { model: "bench", stream: true, messages: [{ role: "user", content: "hi" }] }, '"content":"Hello"');
  // A fresh session each time keeps the history (and so the request) the same size.
  const chat = () => firstToken(`${gateway.url}/v1/chat`, { message: "hi", session: `t${++session}`, stream: true }, "event: text.delta");
  const completions = () =>
    firstToken(`${gateway.url}/v1/chat/completions`, { model: "main", stream: true, messages: [{ role: "user", content: "hi" }] }, '"content":"Hello"');

  try {
    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await chat();
      await completions();
    }
    const samples = { direct: [] as number[], chat: [] as number[], completions: [] as number[] };
    // Interleaved, so machine noise hits all three alike.
    for (let i = 0; i < RUNS; i++) {
      samples.direct.push(await direct());
      samples.chat.push(await chat());
      samples.completions.push(await completions());
    }
    const directP50 = percentile(samples.direct, 50);
    const chatP50 = percentile(samples.chat, 50);
    const completionsP50 = percentile(samples.completions, 50);
    const target = 1.2 * directP50 + 2;
    const result = {
      runs: RUNS,
      directP50,
      chatP50,
      completionsP50,
      chatRatio: chatP50 / directP50,
      completionsRatio: completionsP50 / directP50,
      chatAdded: chatP50 - directP50,
      completionsAdded: completionsP50 - directP50,
      target,
      chatP99: percentile(samples.chat, 99),
      directP99: percentile(samples.direct, 99),
    };
    report("ttft: time to the first text through the gateway vs the same fake model streamed directly", [
      ["runs", String(RUNS)],
      ["direct p50 / p99 (ms)", `${fmt(directP50, 3)} / ${fmt(result.directP99, 3)}`],
      ["/v1/chat stream p50 / p99 (ms)", `${fmt(chatP50, 3)} / ${fmt(result.chatP99, 3)}`],
      ["/v1/chat/completions stream p50 (ms)", fmt(completionsP50, 3)],
      ["added p50: chat / completions (ms)", `${fmt(result.chatAdded, 3)} / ${fmt(result.completionsAdded, 3)}`],
      ["ratio p50: chat / completions", `${fmt(result.chatRatio)}x / ${fmt(result.completionsRatio)}x`],
      ["target: ≤ 1.2 × direct + 2 ms (ms)", `${fmt(target, 3)} → ${chatP50 <= target && completionsP50 <= target ? "met" : "MISSED"}`],
    ]);
    return result;
  } finally {
    await gateway.close();
    await model.close();
    project.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchTtft();
