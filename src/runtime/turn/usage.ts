import type { TokenUsage } from "../../port/events.js";

export type { TokenUsage } from "../../port/events.js";

/** Tokens of a turn's model calls, summed over those whose provider reported usage. */
export class UsageSum {
  private sum: TokenUsage | undefined;

  add(usage: { inputTokens?: number; outputTokens?: number } | undefined): void {
    if (!usage) return;
    this.sum ??= { inputTokens: 0, outputTokens: 0 };
    this.sum.inputTokens += usage.inputTokens ?? 0;
    this.sum.outputTokens += usage.outputTokens ?? 0;
  }

  /** `{usage}` when any call reported it, else nothing (to spread into a result). */
  total(): { usage?: TokenUsage } {
    return this.sum ? { usage: { ...this.sum } } : {};
  }
}
