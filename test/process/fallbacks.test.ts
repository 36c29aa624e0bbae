import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/house.js";
import { ModelCatalog } from "../../src/models/catalog.js";
import type { Timer } from "../../src/signals.js";
import { anthropicError, anthropicTextStream } from "../support/fake-anthropic.js";
import { completionChunk, sseChunks } from "../support/fake-openai.js";
import { ask, fakeServer, instantRetries, modelFailure } from "../support/models.js";
import { writeProject } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";

const okStream = (text: string) => ({ chunks: sseChunks([completionChunk({ content: text }), completionChunk({}, { finish: "stop" })]) });
const unavailable = { status: 503, json: { error: { message: "overloaded" } } };

/** A catalog over a config with entries `main` (openai) → fallbacks `second` (openai) and `claude` (anthropic). */
async function setup(
  extra: { mainExtra?: Record<string, unknown>; fallbacks?: string[]; env?: Record<string, string>; secondKey?: string; timer?: Timer } = {},
) {
  const first = await fakeServer();
  const second = await fakeServer();
  const claude = await fakeServer();
  const config = {
    agents: { defaults: { model_name: "main" } },
    model_list: [
      { model_name: "main", provider: "openai", model: "m1", api_base: first.url, fallbacks: extra.fallbacks ?? ["second", "claude"], ...extra.mainExtra },
      { model_name: "second", provider: "openai", model: "m2", api_base: second.url, api_key: extra.secondKey ?? "sk-second-0000" },
      { model_name: "claude", provider: "anthropic", model: "c1", api_base: claude.url, api_key: "sk-ant-0000" },
    ],
  };
  const loaded = loadConfig({ env: extra.env ?? {}, cwd: writeProject({ config, agents: {} }) });
  const retries = instantRetries(extra.timer ? { timer: extra.timer } : {});
  return { first, second, claude, retries, catalog: new ModelCatalog(loaded, retries) };
}

describe("fallbacks", () => {
  it("answer in order after the entry keeps failing, and the response names the model that answered", async () => {
    const { first, second, claude, catalog } = await setup();
    first.setHandler(() => unavailable);
    second.setHandler(() => ({ destroy: true }));
    claude.enqueue(anthropicTextStream("from claude"));
    const provider = catalog.get("main");
    expect(provider.name).toBe("main");
    const response = await provider.chat(ask());
    expect(response.text).toBe("from claude");
    expect(response.modelName).toBe("claude");
    // each entry used its own retries before the next one was tried
    expect([first.requests.length, second.requests.length, claude.requests.length]).toEqual([3, 3, 1]);
  });

  it("are not tried after a failure that would happen anywhere (auth, bad request)", async () => {
    const { first, second, catalog } = await setup();
    first.enqueue({ status: 401, json: { error: { message: "bad key" } } });
    second.enqueue(okStream("unused"));
    const error = await modelFailure(catalog.get("main").chat(ask()));
    expect(error.code).toBe("model_auth");
    expect(error.message).toBe('model "main": HTTP 401: bad key');
    expect(second.requests).toHaveLength(0);
  });

  it("take over after a timeout", async () => {
    const timers = new ManualTimers();
    const { first, second, catalog } = await setup({ mainExtra: { request_timeout: 50 }, timer: timers.timer });
    first.enqueue({ delayMs: 60_000, ...okStream("too slow") });
    second.enqueue(okStream("quick"));
    const answer = catalog.get("main").chat(ask());
    // `main` has the request and does not answer: its 50 ms run out.
    await eventually(() => expect(first.requests).toHaveLength(1));
    expect(timers.pending(50)).toHaveLength(1);
    timers.fireAll(50);
    expect(await answer).toMatchObject({ text: "quick", modelName: "second" });
  });

  it("all failing: the error names the asked entry, says what each one did, and takes the last one's class", async () => {
    const { first, second, claude, catalog } = await setup();
    first.setHandler(() => unavailable);
    second.setHandler(() => unavailable);
    claude.setHandler(() => anthropicError(429, "rate_limit_error", "Number of requests has exceeded your rate limit"));
    const error = await modelFailure(catalog.get("main").chat(ask()));
    expect(error.code).toBe("model_rate_limit");
    expect(error.modelName).toBe("main");
    expect(error.message).toBe(
      'model "main": HTTP 503: overloaded (after 3 attempts); ' +
        'fallback "second": HTTP 503: overloaded (after 3 attempts); ' +
        'fallback "claude": HTTP 429: Number of requests has exceeded your rate limit (after 3 attempts)',
    );
    expect(error.message).not.toContain("sk-");
  });

  it("skip a fallback whose config cannot be used, and are made only when needed", async () => {
    const { first, claude, catalog } = await setup({ secondKey: "${SECOND_KEY}" });
    first.enqueue(okStream("main answers"));
    // `second` has an unset variable: irrelevant while `main` answers
    expect((await catalog.get("main").chat(ask())).modelName).toBe("main");

    first.setHandler(() => unavailable);
    claude.enqueue(anthropicTextStream("claude answers"));
    expect(await catalog.get("main").chat(ask())).toMatchObject({ modelName: "claude", text: "claude answers" });
    await expect(catalog.get("main").chat(ask())).rejects.toThrow(
      /fallback "second" is not usable: model_list\[1\]\.api_key: environment variable SECOND_KEY is not set/,
    );
  });

  it("are not tried when part of the answer already reached the caller", async () => {
    const { first, second, catalog } = await setup();
    first.enqueue({ chunks: sseChunks([completionChunk({ content: "half" }), { error: { message: "upstream died", code: 502 } }], { done: false }) });
    second.enqueue(okStream("unused"));
    const seen: string[] = [];
    const error = await modelFailure(catalog.get("main").chat(ask(), (d) => d.type === "text" && seen.push(d.text)));
    expect(error.code).toBe("model_server");
    expect(seen).toEqual(["half"]);
    expect(second.requests).toHaveLength(0);
  });

  it("an entry without fallbacks is served as it is", async () => {
    const { first, catalog } = await setup({ fallbacks: [] });
    first.setHandler(() => unavailable);
    const error = await modelFailure(catalog.get("main").chat(ask()));
    expect(error.message).toBe('model "main": HTTP 503: overloaded (after 3 attempts)');
  });
});
