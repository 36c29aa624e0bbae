import type { ResponseAssembler } from "./assembler.js";
import type { ReplayBlock } from "./message.js";

/**
 * An Anthropic answer's content blocks as they arrive, kept so that its
 * thinking can go back exactly as received: thinking and redacted_thinking
 * blocks whole (signature and data untouched, in their order among the other
 * blocks), text whole, tool_use by id. Only an answer that holds thinking is
 * kept; its reasoning bytes count toward the answer's reasoning limit.
 */

/** The fields of a content block (or of a `content_block_delta`) that matter here. */
export interface BlockFields {
  type: string;
  text?: string | null | undefined;
  thinking?: string | null | undefined;
  signature?: string | null | undefined;
  data?: string | null | undefined;
  id?: string | null | undefined;
}

export class ThinkingReplay {
  private readonly entries = new Map<number, ReplayBlock>();
  private thinkingSeen = false;

  constructor(private readonly out: ResponseAssembler) {}

  /** A block begins (streamed) or is given whole. */
  start(index: number, block: BlockFields): void {
    switch (block.type) {
      case "thinking":
        this.thinkingSeen = true;
        this.out.reasoning(block.thinking);
        this.out.hiddenReasoning(block.signature);
        this.entries.set(index, { type: "thinking", thinking: block.thinking ?? "", signature: block.signature ?? "" });
        break;
      case "redacted_thinking":
        this.thinkingSeen = true;
        this.out.hiddenReasoning(block.data);
        this.entries.set(index, { type: "redacted_thinking", data: block.data ?? "" });
        break;
      case "text":
        this.entries.set(index, { type: "text", text: block.text ?? "" });
        break;
      case "tool_use":
        if (block.id) this.entries.set(index, { type: "tool_use", id: block.id });
        break;
    }
  }

  /** A `thinking_delta` or `signature_delta` of a streamed block (text deltas are joined by `text`). */
  delta(index: number, delta: BlockFields): void {
    const entry = this.entries.get(index);
    if (delta.type === "thinking_delta") {
      this.out.reasoning(delta.thinking);
      if (entry?.type === "thinking") entry.thinking += delta.thinking ?? "";
    } else if (delta.type === "signature_delta") {
      // The block's whole signature, sent once before it stops (a repeat replaces it, as the official SDK reads it).
      this.out.hiddenReasoning(delta.signature);
      if (entry?.type === "thinking") entry.signature = delta.signature ?? "";
    }
  }

  /** A streamed text block's piece, kept for the replay (the assembler takes it as the answer's text). */
  text(index: number, text: string | null | undefined): void {
    const entry = this.entries.get(index);
    if (entry?.type === "text" && text) entry.text += text;
  }

  /** Hands the replay to the assembler when the answer held thinking. */
  settle(): void {
    if (!this.thinkingSeen) return;
    const blocks = [...this.entries.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, entry]) => entry)
      .filter((entry) => entry.type !== "text" || entry.text.trim() !== "");
    this.out.thinking({ format: "anthropic", blocks });
  }
}
