import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/house.js";
import { ConfigError } from "../../src/errors.js";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { ModelCatalog } from "../../src/models/catalog.js";
import { FallbackProvider } from "../../src/models/fallback.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import { ask, fakeServer, instantRetries } from "../support/models.js";
import { writeProject } from "../support/project.js";

const catalogOf = (model_list: unknown[]) =>
  new ModelCatalog(loadConfig({ env: {}, cwd: writeProject({ config: { agents: { defaults: { model_name: "a" } }, model_list }, agents: {} }) }));

describe("model catalog", () => {
  it("makes an anthropic provider that posts to the default API base", () => {
    const provider = catalogOf([{ model_name: "a", provider: "anthropic", model: "claude-x", api_key: "k" }]).get("a");
    expect(provider).toBeInstanceOf(AnthropicProvider);
    expect((provider as AnthropicProvider).wire(ask()).url).toBe("https://api.anthropic.com/v1/messages");
  });

  it("makes an openai provider that posts to the default API base, and keeps it", () => {
    const catalog = catalogOf([{ model_name: "a", provider: "openai", model: "gpt-x" }]);
    const provider = catalog.get("a");
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect((provider as OpenAIProvider).wire(ask()).url).toBe("https://api.openai.com/v1/chat/completions");
    expect(catalog.get("a")).toBe(provider);
  });

  it("refuses a temperature above 1 for anthropic, naming the config path", () => {
    const catalog = catalogOf([{ model_name: "a", provider: "anthropic", model: "claude-x", temperature: 1.5 }]);
    expect(() => catalog.get("a")).toThrow(new ConfigError(['model_list[0].temperature: must be <= 1 for provider "anthropic"']));
  });

  it("serves an entry with fallbacks under its own name, skipping itself and repeats in its fallbacks", async () => {
    const server = await fakeServer(() => ({ status: 503, json: { error: { message: "down" } } }));
    const config = {
      agents: { defaults: { model_name: "a" } },
      model_list: [
        { model_name: "a", provider: "openai", model: "gpt-x", api_base: server.url, fallbacks: ["a", "b", "b"] },
        { model_name: "b", provider: "builtin", model: "scripted" },
      ],
    };
    const catalog = new ModelCatalog(loadConfig({ env: {}, cwd: writeProject({ config, agents: {} }) }), instantRetries());
    const provider = catalog.get("a");
    expect(provider).toBeInstanceOf(FallbackProvider);
    expect(provider.name).toBe("a");
    expect((await provider.chat(ask())).modelName).toBe("b");
    expect(server.requests).toHaveLength(3);
  });
});
