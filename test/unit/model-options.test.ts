import { describe, expect, it } from "vitest";
import { harness } from "../support/project.js";

/** The provider options of a model entry (thinking, cache, max_tokens_field, reasoning_effort, vision), checked whole at start for the entry that is used. */

const start =
  (entry: Record<string, unknown>, more: Record<string, unknown>[] = []) =>
  () =>
    harness({ config: { agents: { defaults: { model_name: "m" } }, model_list: [{ model_name: "m", model: "x", api_key: "k", ...entry }, ...more] } });

describe("model entry options checked at start", () => {
  it.each([
    [
      { provider: "openai", thinking: { budget_tokens: 2048 } },
      'model_list[0].thinking: only for provider "anthropic" (this entry is "openai"; an OpenAI-compatible reasoning model takes reasoning_effort)',
    ],
    [
      { provider: "openai", cache: true },
      'model_list[0].cache: only for provider "anthropic" (this entry is "openai"; OpenAI-compatible servers cache prompts by themselves)',
    ],
    [
      { provider: "anthropic", reasoning_effort: "high" },
      'model_list[0].reasoning_effort: only for provider "openai" (this entry is "anthropic"; for Claude, use thinking)',
    ],
    [
      { provider: "anthropic", max_tokens_field: "max_tokens" },
      'model_list[0].max_tokens_field: only for provider "openai" (this entry is "anthropic"; the Messages API always takes max_tokens)',
    ],
    [{ provider: "builtin", vision: true }, 'model_list[0].vision: the built-in model reads text only; leave vision out for provider "builtin"'],
    [
      { provider: "anthropic", thinking: { budget_tokens: 4096 } },
      "model_list[0].thinking.budget_tokens: must be less than max_tokens (4096, the default); raise max_tokens, which counts the thinking too",
    ],
    [
      { provider: "anthropic", max_tokens: 16000, thinking: { budget_tokens: 16000 } },
      "model_list[0].thinking.budget_tokens: must be less than max_tokens (16000); raise max_tokens, which counts the thinking too",
    ],
    [
      { provider: "anthropic", max_tokens: 16000, temperature: 0.5, thinking: { budget_tokens: 8000 } },
      "model_list[0].temperature: the API takes no temperature but 1 with thinking on; leave temperature out",
    ],
  ])("refuses %j naming the path and what to do", (entry, message) => {
    expect(start(entry)).toThrow(message);
  });

  it("refuses a thinking budget under 1024 and an unknown effort in the schema, naming the path", () => {
    expect(start({ provider: "anthropic", thinking: { budget_tokens: 100 } })).toThrow("model_list[0].thinking.budget_tokens: must be >= 1024");
    expect(start({ provider: "openai", reasoning_effort: "max" })).toThrow("model_list[0].reasoning_effort: expected one of");
  });

  it("takes each option on its own provider", () => {
    expect(start({ provider: "anthropic", max_tokens: 16000, thinking: { budget_tokens: 8000 }, cache: true, vision: false })).not.toThrow();
    expect(start({ provider: "openai", model: "o3-mini", max_tokens_field: "max_completion_tokens", reasoning_effort: "low", vision: true })).not.toThrow();
  });

  it("gives a thinking entry agents.defaults.max_tokens but not agents.defaults.temperature", () => {
    const config = (thinking: object) => ({
      agents: { defaults: { model_name: "m", max_tokens: 12000, temperature: 0.4 } },
      model_list: [{ model_name: "m", provider: "anthropic", model: "x", api_key: "k", ...thinking }],
    });
    expect(() => harness({ config: config({ thinking: { budget_tokens: 8000 } }) })).not.toThrow();
    expect(() => harness({ config: config({ thinking: { budget_tokens: 12000 } }) })).toThrow(
      "model_list[0].thinking.budget_tokens: must be less than max_tokens (12000); raise max_tokens, which counts the thinking too",
    );
  });

  it("leaves an entry nobody uses alone", () => {
    expect(start({ provider: "builtin" }, [{ model_name: "unused", provider: "openai", model: "x", cache: true }])).not.toThrow();
  });
});
