import type { VendorChoice } from "../config/layout.js";
import type { ModelEntry } from "../config/schema.js";
import type { ModelProvider } from "./provider.js";
import type { TransportOptions } from "./transport.js";

/**
 * A model provider as it registers: its `provider` name, the entry keys
 * only it takes (with their schemas), the vendors it serves by PicoClaw's
 * name (`ollama`, with its default `api_base`), what it refuses of a used
 * entry beyond the schema, and how it makes the provider of an entry. The
 * model catalog looks a provider up by the entry's `provider`; nothing
 * switches over vendors. The built-in ones are listed in providers.ts;
 * embedders add theirs through the composition root.
 */
export interface ProviderAdapter extends VendorChoice {
  /** Problems of a used entry that its provider refuses, each naming its key (the caller adds `model_list[i].`), never quoting a secret. */
  check?(entry: ModelEntry): string[];
  /** False when the entry takes no temperature, so agents.defaults.temperature is not applied to it (an Anthropic entry that thinks). */
  takesTemperature?(entry: ModelEntry): boolean;
  /** The provider serving the entry (checked already); `opts` are the network, waiting and randomness every HTTP provider shares. */
  create(entry: ModelEntry, opts: TransportOptions): ModelProvider;
}
