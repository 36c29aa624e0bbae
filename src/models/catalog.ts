import { type LoadedConfig, usableModelEntry } from "../config/load.js";
import type { ModelEntry } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import { AnthropicProvider } from "./anthropic.js";
import { BuiltinModel } from "./builtin.js";
import { OpenAIProvider } from "./openai.js";
import type { ModelProvider } from "./provider.js";
import type { TransportOptions } from "./transport.js";

/** What the HTTP providers share: the network, waiting and randomness (tests inject fast ones). */
export type ModelCatalogOptions = TransportOptions;

/**
 * The providers of `model_list`, made on first use (so a `${VAR}` that is
 * not set only matters for an entry that is actually used) and then kept.
 */
export class ModelCatalog {
  private readonly providers = new Map<string, ModelProvider>();

  constructor(
    private readonly loaded: Pick<LoadedConfig, "config" | "unresolved">,
    private readonly opts: ModelCatalogOptions = {},
  ) {}

  /** The provider for a model_name; throws ConfigError naming the config path when unusable. */
  get(modelName: string): ModelProvider {
    let provider = this.providers.get(modelName);
    if (!provider) {
      const entry = usableModelEntry(this.loaded, modelName);
      provider = this.create(entry);
      this.providers.set(modelName, provider);
    }
    return provider;
  }

  private create(entry: ModelEntry): ModelProvider {
    const index = this.loaded.config.model_list.indexOf(entry);
    if (entry.api_base !== undefined && !URL.canParse(entry.api_base)) {
      throw new ConfigError([`model_list[${index}].api_base: not a URL: ${JSON.stringify(entry.api_base)}`]);
    }
    switch (entry.provider) {
      case "builtin":
        return new BuiltinModel(entry.model_name);
      case "openai":
        return new OpenAIProvider(entry, this.opts);
      case "anthropic":
        if (entry.temperature !== undefined && entry.temperature > 1) {
          throw new ConfigError([`model_list[${index}].temperature: must be <= 1 for provider "anthropic"`]);
        }
        return new AnthropicProvider(entry, this.opts);
    }
  }
}
