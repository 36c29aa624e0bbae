import { randomUUID } from "node:crypto";
import { ModelError, messageOf } from "../errors.js";
import { formatBytes } from "../bytes.js";
import { ANSWER_LIMITS } from "./limits.js";
import type { Thinking, ToolCall } from "./message.js";
import type { ModelDelta, ModelResponse, Usage } from "./provider.js";

/** A piece of a tool call as a server sends it; every field may be missing. */
export interface ToolCallPart {
  /** The server's index for the call; when missing, the id or the name tells which call it is. */
  index?: number | undefined;
  id?: string | undefined;
  name?: string | undefined;
  /** A fragment of the JSON text to append, or a whole already-parsed value. */
  arguments?: string | unknown;
}

interface Slot {
  /** Position in the answer (order of first appearance), which is what callers see as `index`. */
  position: number;
  id: string | undefined;
  name: string | undefined;
  arguments: string;
}

const USAGE_KEYS = ["inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"] as const satisfies readonly (keyof Usage)[];

export const makeCallId = (): string => `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;

/**
 * Builds one ModelResponse out of pieces, whether they come from a stream of
 * chunks or from one whole JSON answer: both adapters and both modes go
 * through here, so a non-streaming answer is just a stream of one chunk.
 * Every piece is passed to `onDelta` as it arrives.
 */
export class ResponseAssembler {
  private readonly texts: string[] = [];
  private readonly reasonings: string[] = [];
  private readonly slots: Slot[] = [];
  /** Server index → slot currently bound to it. */
  private readonly byIndex = new Map<number, Slot>();
  private usageSeen: Usage | undefined;
  private thinkingSeen: Thinking | undefined;
  private reasoningReplay: "reasoning_content" | "reasoning" | undefined;
  private finishReason: string | undefined;
  private deliveredAny = false;
  /** UTF-8 bytes taken so far, for ANSWER_LIMITS. */
  private textBytes = 0;
  private reasoningBytes = 0;
  private argumentBytes = 0;

  constructor(
    readonly modelName: string,
    private readonly onDelta?: (delta: ModelDelta) => void,
    private readonly newCallId: () => string = makeCallId,
  ) {}

  /** Whether anything reached the caller through onDelta (then a retry would repeat it). */
  get delivered(): boolean {
    return this.deliveredAny;
  }

  text(text: string | null | undefined): void {
    if (!text) return;
    this.textBytes = this.bounded(this.textBytes, text, ANSWER_LIMITS.textBytes, "text");
    this.texts.push(text);
    this.emit({ type: "text", text });
  }

  reasoning(text: string | null | undefined): void {
    if (!text) return;
    this.reasoningBytes = this.bounded(this.reasoningBytes, text, ANSWER_LIMITS.reasoningBytes, "reasoning");
    this.reasonings.push(text);
    this.emit({ type: "reasoning", text });
  }

  /**
   * Bytes of reasoning the caller never sees but the answer holds (signatures,
   * redacted thinking): bounded with the reasoning, not handed on.
   */
  hiddenReasoning(text: string | null | undefined): void {
    if (!text) return;
    this.reasoningBytes = this.bounded(this.reasoningBytes, text, ANSWER_LIMITS.reasoningBytes, "reasoning");
  }

  /** What the provider must get back within the turn (its bytes went through `reasoning` / `hiddenReasoning`). */
  thinking(thinking: Thinking): void {
    this.thinkingSeen = thinking;
  }

  /** The reasoning text goes back to an OpenAI-compatible server in this field (the first one it used). */
  reasoningField(field: "reasoning_content" | "reasoning"): void {
    this.reasoningReplay ??= field;
  }

  /**
   * A piece of a tool call. Pieces are joined by `index`; without one, a
   * known `id` picks its call, a `name` starts a new call, and anything else
   * continues the last call. A new `id` on an index that already has a
   * different one starts a new call (some servers send every call as index 0).
   */
  toolCall(part: ToolCallPart): void {
    const slot = this.slotFor(part);
    const delta: ModelDelta & { type: "tool_call" } = { type: "tool_call", index: slot.position };
    if (part.id && !slot.id) {
      slot.id = part.id;
      delta.id = part.id;
    }
    if (part.name && !slot.name) {
      slot.name = part.name;
      delta.name = part.name;
    }
    if (typeof part.arguments === "string") {
      if (part.arguments !== "") {
        this.argumentBytes = this.bounded(this.argumentBytes, part.arguments, ANSWER_LIMITS.toolArgumentBytes, "tool-call arguments");
        slot.arguments += part.arguments;
        delta.arguments = part.arguments;
      }
    } else if (part.arguments !== undefined && part.arguments !== null) {
      let json: string;
      try {
        json = JSON.stringify(part.arguments);
      } catch (error) {
        // Arguments sent as JSON nested thousands deep: JSON.stringify recurses and throws (a RangeError, which
        // would otherwise be taken for a network failure and retried).
        throw new ModelError("bad_response", this.modelName, `the answer's tool-call arguments cannot be read back as JSON (${messageOf(error)})`);
      }
      this.argumentBytes = this.bounded(this.argumentBytes, json, ANSWER_LIMITS.toolArgumentBytes, "tool-call arguments");
      slot.arguments = json;
      delta.arguments = slot.arguments;
    }
    if (delta.id !== undefined || delta.name !== undefined || delta.arguments !== undefined) this.emit(delta);
  }

  /** Replaces a call's arguments with their final form, without telling the caller again. */
  settleArguments(index: number, json: string): void {
    const slot = this.byIndex.get(index);
    if (slot) slot.arguments = json;
  }

  /** The arguments joined so far for a server index ("" when none). */
  argumentsOf(index: number): string {
    return this.byIndex.get(index)?.arguments ?? "";
  }

  /** Counts the answer's usage; a later report of a count replaces the earlier one (streams repeat them). */
  usage(usage: Usage): void {
    const next: Usage = { ...this.usageSeen };
    for (const key of USAGE_KEYS) {
      const value = usage[key];
      if (typeof value === "number") next[key] = value;
    }
    if (USAGE_KEYS.some((key) => next[key] !== undefined)) this.usageSeen = next;
  }

  finish(reason: string | null | undefined): void {
    if (reason) this.finishReason = reason;
  }

  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** The whole answer. Throws bad_response when a tool call never got a name. */
  result(): ModelResponse {
    const toolCalls: ToolCall[] = this.slots.map((slot) => {
      if (!slot.name) {
        throw new ModelError("bad_response", this.modelName, `tool call #${slot.position + 1} in the answer has no function name`);
      }
      return {
        id: slot.id ?? this.newCallId(),
        type: "function",
        function: { name: slot.name, arguments: slot.arguments.trim() === "" ? "{}" : slot.arguments },
      };
    });
    const text = this.texts.join("");
    const reasoning = this.reasonings.join("");
    const thinking: Thinking | undefined =
      this.thinkingSeen ?? (reasoning && this.reasoningReplay ? { format: "openai", field: this.reasoningReplay, text: reasoning } : undefined);
    // Some servers say "stop" although they called tools: the calls are what counts.
    const finishReason = toolCalls.length > 0 ? "tool_calls" : this.finishReason;
    return {
      text: text === "" && toolCalls.length > 0 ? null : text,
      toolCalls,
      ...(reasoning ? { reasoning } : {}),
      ...(thinking ? { thinking } : {}),
      ...(this.usageSeen ? { usage: this.usageSeen } : {}),
      ...(finishReason ? { finishReason } : {}),
      modelName: this.modelName,
    };
  }

  private slotFor(part: ToolCallPart): Slot {
    const index = typeof part.index === "number" && Number.isInteger(part.index) ? part.index : undefined;
    if (index !== undefined) {
      const bound = this.byIndex.get(index);
      if (bound && !startsAnotherCall(part, bound)) return bound;
      const slot = this.newSlot();
      this.byIndex.set(index, slot);
      return slot;
    }
    if (part.id) {
      const known = this.slots.find((s) => s.id === part.id);
      if (known) return known;
    }
    const last = this.slots.at(-1);
    if (!part.name && !part.id && last) return last;
    const slot = this.newSlot();
    // Bind a free server index so that later pieces with an index can still find it.
    let free = slot.position;
    while (this.byIndex.has(free)) free++;
    this.byIndex.set(free, slot);
    return slot;
  }

  /** `taken` plus `piece`, or a bad_response when that is over `limit`: nothing of such an answer is kept. */
  private bounded(taken: number, piece: string, limit: number, what: string): number {
    const total = taken + Buffer.byteLength(piece, "utf8");
    if (total > limit) {
      throw new ModelError(
        "bad_response",
        this.modelName,
        `the answer's ${what} ${what.endsWith("s") ? "are" : "is"} over ${formatBytes(limit)}, more than an answer may hold; nothing of it was kept (lower max_tokens, or check the server)`,
      );
    }
    return total;
  }

  private newSlot(): Slot {
    if (this.slots.length >= ANSWER_LIMITS.toolCalls) {
      throw new ModelError(
        "bad_response",
        this.modelName,
        `the answer has more than ${ANSWER_LIMITS.toolCalls} tool calls, more than an answer may hold; nothing of it was kept`,
      );
    }
    const slot: Slot = { position: this.slots.length, id: undefined, name: undefined, arguments: "" };
    this.slots.push(slot);
    return slot;
  }

  private emit(delta: ModelDelta): void {
    this.deliveredAny = true;
    this.onDelta?.(delta);
  }
}

/**
 * Whether a piece at an index already in use begins a new call (servers that
 * number every call 0): it carries another id, or a name while the call
 * there already has one and is either another function or already whole.
 */
function startsAnotherCall(part: ToolCallPart, bound: Slot): boolean {
  if (part.id && bound.id && part.id !== bound.id) return true;
  if (!part.name || !bound.name) return false;
  return part.name !== bound.name || isWholeJson(bound.arguments);
}

function isWholeJson(text: string): boolean {
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
