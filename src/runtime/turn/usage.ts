import type { TokenUsage } from "../../port/events.js";

export type { TokenUsage } from "../../port/events.js";
/** Every prompt token of a call or turn (the cache's reads and writes too): what an OpenAI-compatible client calls prompt_tokens. */
export { promptTokensOf } from "../../models/provider.js";

/** Tokens of a turn's model calls, summed over those whose provider reported usage. */
export class UsageSum {
  private sum: TokenUsage | undefined;

  add(usage: { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number } | undefined): void {
    if (!usage) return;
    const sum = (this.sum ??= { inputTokens: 0, outputTokens: 0 });
    sum.inputTokens += usage.inputTokens ?? 0;
    sum.outputTokens += usage.outputTokens ?? 0;
    // Cache counts only when some call reported them.
    if (usage.cacheReadInputTokens !== undefined) sum.cacheReadInputTokens = (sum.cacheReadInputTokens ?? 0) + usage.cacheReadInputTokens;
    if (usage.cacheCreationInputTokens !== undefined) sum.cacheCreationInputTokens = (sum.cacheCreationInputTokens ?? 0) + usage.cacheCreationInputTokens;
  }

  /** `{usage}` when any call reported it, else nothing (to spread into a result). */
  total(): { usage?: TokenUsage } {
    return this.sum ? { usage: { ...this.sum } } : {};
  }
}
