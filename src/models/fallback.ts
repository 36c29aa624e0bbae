import { ModelError, abortReason, messageOf } from "../errors.js";
import { detailOf, restate } from "./http-errors.js";
import type { ModelDelta, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";

/** A fallback's provider, made when it is first needed (its config may be unusable). */
export interface FallbackCandidate {
  name: string;
  provider: () => ModelProvider;
}

/**
 * A model entry with `fallbacks`: the entry answers if it can; after a
 * failure that another model could get past (rate limit, server error,
 * network, timeout), the next fallback is tried, in order. The response's
 * `modelName` says which entry answered. A failure that would happen again
 * anywhere (bad request, auth, bad response) stops the chain, and so does a
 * failure after part of the answer already reached the caller.
 */
export class FallbackProvider implements ModelProvider {
  readonly name: string;
  /** The entry's own: the gateway refuses images for it; a fallback without vision gets notes in their place. */
  readonly vision: boolean;

  constructor(
    private readonly primary: ModelProvider,
    private readonly fallbacks: readonly FallbackCandidate[],
  ) {
    this.name = primary.name;
    this.vision = primary.vision !== false;
  }

  async warm(): Promise<void> {
    await this.primary.warm?.();
  }

  async chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    const failures: string[] = [];
    let last: ModelError | undefined;
    const candidates: FallbackCandidate[] = [{ name: this.name, provider: () => this.primary }, ...this.fallbacks];
    for (const candidate of candidates) {
      request.signal.throwIfAborted();
      let provider: ModelProvider;
      try {
        provider = candidate.provider();
      } catch (error) {
        failures.push(`fallback "${candidate.name}" is not usable: ${messageOf(error)}`);
        continue;
      }
      let delivered = false;
      try {
        return await provider.chat(request, (delta) => {
          delivered = true;
          onDelta?.(delta);
        });
      } catch (error) {
        if (request.signal.aborted) throw abortReason(request.signal);
        if (!(error instanceof ModelError)) throw error;
        last = error;
        failures.push(candidate.name === this.name ? detailOf(error) : `fallback "${candidate.name}": ${detailOf(error)}`);
        if (!error.retryable || delivered) break;
      }
    }
    if (!last) throw new ModelError("server", this.name, failures.join("; "));
    throw failures.length === 1 ? last : restate(last, failures.join("; "), this.name);
  }
}
