import type { DeliveryOrigin } from "../../port/events.js";
import type { Delivery } from "../../session/delivery.js";

/** Tool outputs one turn shows at most, whatever their size. */
export const MAX_TURN_OUTPUTS = 500;

/**
 * What one turn shows the user of its tools' results, bounded: at most
 * `maxBytes` of text (UTF-8) and MAX_TURN_OUTPUTS outputs in all. Past
 * either, the rest is not delivered (the model still gets every result),
 * and before the turn's reply the user is told once how much was left out.
 */
export class OutputBudget {
  private bytes = 0;
  private count = 0;
  private skipped = { outputs: 0, bytes: 0 };

  constructor(
    private readonly maxBytes: number,
    private readonly turnId: string,
    private readonly deliver: (delivery: Delivery, origin: DeliveryOrigin) => void,
  ) {}

  /** Whether this text would be shown now (the budget as spent so far). */
  fits(text: string): boolean {
    return this.count < MAX_TURN_OUTPUTS && this.bytes + Buffer.byteLength(text) <= this.maxBytes;
  }

  /** A tool's output for the user: delivered while the turn's budget lasts; whether it was. */
  tool(from: string, text: string, callId: string): boolean {
    const size = Buffer.byteLength(text);
    if (this.count >= MAX_TURN_OUTPUTS || this.bytes + size > this.maxBytes) {
      this.skipped.outputs++;
      this.skipped.bytes += size;
      return false;
    }
    this.count++;
    this.bytes += size;
    this.deliver({ from, text }, { turnId: this.turnId, callId });
    return true;
  }

  /** Before the reply: what was left out, said once (nothing when nothing was). */
  finish(): void {
    if (this.skipped.outputs === 0) return;
    const { outputs, bytes } = this.skipped;
    this.skipped = { outputs: 0, bytes: 0 };
    const why = this.count >= MAX_TURN_OUTPUTS ? `${MAX_TURN_OUTPUTS} outputs` : `${this.maxBytes} bytes (agents.defaults.max_turn_output_bytes)`;
    this.deliver(
      {
        from: "command",
        text: `[${outputs} more tool output${outputs === 1 ? "" : "s"} of this turn (${bytes} bytes) not shown: a turn shows at most ${why}; the model got them all.]`,
      },
      { turnId: this.turnId },
    );
  }
}
