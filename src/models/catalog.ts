import { type LoadedConfig, usableModelEntry } from "../config/load.js";
import type { ModelEntry } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import type { ProviderAdapter } from "./adapter.js";
import { entryProblems } from "./entry-check.js";
import { FallbackProvider } from "./fallback.js";
import type { ModelProvider } from "./provider.js";
import { BUILTIN_PROVIDERS } from "./providers.js";
import type { TransportOptions } from "./transport.js";

/** What the HTTP providers share: the network, waiting and randomness (tests inject fast ones). */
export type ModelCatalogOptions = TransportOptions;

/**
 * The providers of `model_list`, made on first use (so a `${VAR}` that is
 * not set only matters for an entry that is actually used) and then kept.
 * An entry with `fallbacks` is served through a FallbackProvider whose
 * fallbacks are made only when they are needed. Each entry's provider is
 * the registered adapter of its `provider` name.
 */
export class ModelCatalog {
  private readonly providers = new Map<string, ModelProvider>();
  private readonly served = new Map<string, ModelProvider>();

  constructor(
    private readonly loaded: Pick<LoadedConfig, "config" | "unresolved">,
    private readonly opts: ModelCatalogOptions = {},
    private readonly adapters: readonly ProviderAdapter[] = BUILTIN_PROVIDERS,
  ) {}

  /** The provider for a model_name (with its fallbacks); throws ConfigError naming the config path when unusable. */
  get(modelName: string): ModelProvider {
    let provider = this.served.get(modelName);
    if (!provider) {
      const own = this.provider(modelName);
      const entry = this.loaded.config.model_list.find((m) => m.model_name === modelName);
      const fallbacks = [...new Set(entry?.fallbacks ?? [])].filter((name) => name !== modelName);
      provider = fallbacks.length
        ? new FallbackProvider(
            own,
            fallbacks.map((name) => ({ name, provider: () => this.provider(name) })),
          )
        : own;
      this.served.set(modelName, provider);
    }
    return provider;
  }

  /** The entry's own provider, without its fallbacks. */
  private provider(modelName: string): ModelProvider {
    let provider = this.providers.get(modelName);
    if (!provider) {
      const entry = usableModelEntry(this.loaded, modelName);
      provider = this.create(entry);
      this.providers.set(modelName, provider);
    }
    return provider;
  }

  private create(written: ModelEntry): ModelProvider {
    const index = this.loaded.config.model_list.indexOf(written);
    const adapter = this.adapters.find((a) => a.type === written.provider);
    if (!adapter) throw new ConfigError([`model_list[${index}].provider: no provider "${written.provider}" is registered`]);
    // agents.defaults.max_tokens / temperature apply to an entry that sets none of its own
    // (not the temperature to one its provider says takes none: an Anthropic entry that thinks).
    const { max_tokens, temperature } = this.loaded.config.agents.defaults;
    const entry: ModelEntry = {
      ...written,
      ...(written.max_tokens === undefined && max_tokens !== undefined ? { max_tokens } : {}),
      ...(written.temperature === undefined && temperature !== undefined && adapter.takesTemperature?.(written) !== false ? { temperature } : {}),
    };
    const problems = entryProblems(entry, this.adapters).map((p) => `model_list[${index}].${p}`);
    if (problems.length > 0) throw new ConfigError(problems);
    return adapter.create(entry, this.opts);
  }
}
