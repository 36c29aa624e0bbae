import { JsonText } from "./json-text.js";

/** Messages searched from the front of a request for one the memo's text holds (the prompt and a note are new each turn). */
const ALIGN_PROBES = 4;

/** Bytes of `[`, `,` and `]`. */
const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;
const NO_BYTES = Buffer.alloc(0);

/**
 * The JSON of the messages a session's last model call sent, kept for its
 * next one: the bytes of that call's body, and where each message's JSON
 * is in them. A turn's calls send the same prompt and history, then the
 * turn's messages so far, each call a few more than the one before; and
 * the next turn sends the same history objects again (the store's own,
 * never changed in place), less the oldest exchanges the history let go,
 * plus the last turn's messages as stored. So each call's body copies,
 * message by message, the bytes of every message it sends that the call
 * before sent too (the same object, found at the same distance from where
 * it was: a history shifted by what it dropped), and serializes only the
 * rest. On a long conversation that is most of a request body's JSON made
 * once instead of once a call, and no string of it in V8's heap (a text of
 * the whole history kept from one turn to the next outlives the young
 * generation: the collector copied and marked it, costing what its
 * serializing saved). A turn takes it from its session's RequestMemos and
 * gives it back when it ends.
 */
export class RequestMemo {
  private owner: unknown;
  private sources: readonly unknown[] = [];
  /** The last body written from this memo's messages, never changed (bodyBytes). */
  private bytes: Buffer = NO_BYTES;
  /** Where each source's JSON starts and ends in `bytes`. */
  private starts: readonly number[] = [];
  private ends: readonly number[] = [];

  /** Bytes kept (the last body sent, what RequestMemos counts). */
  get size(): number {
    return this.sources.length === 0 ? 0 : this.bytes.length;
  }

  /** Bytes of the messages' JSON in what is kept. */
  get messageBytes(): number {
    return this.sources.length === 0 ? 0 : this.ends[this.ends.length - 1]! - this.starts[0]! + 2;
  }

  /**
   * `messages` as the JSON array of `wire(message)` for each: exactly
   * `JSON.stringify(messages.map(wire))`. The bytes of a message the last
   * call of the same `owner` sent too (the same object, or one whose own
   * fields hold the very same values) are copied from its body; only the
   * others are serialized. `wire` must make each message's JSON from that
   * message's own fields alone. The memo learns this call's messages when
   * its body is written (bodyBytes).
   */
  messagesJson<M>(owner: unknown, messages: readonly M[], wire: (message: M) => unknown): JsonText {
    const before = this.sources;
    const shift = owner === this.owner && before.length > 0 ? alignment(messages, before) : undefined;
    const plan = new MessagesJson(this, owner, messages, this.bytes, this.starts, this.ends);
    let i = 0;
    while (i < messages.length) {
      // The first message (the system prompt, made anew each turn) is the last call's first, whatever the history dropped.
      const j = shift === undefined ? -1 : i === 0 ? 0 : i + shift;
      if (j >= 0 && j < before.length && same(messages[i], before[j])) {
        // A run of messages the last call sent in the same order: one copy of its bytes.
        let k = j + 1;
        while (k < before.length && i + (k - j) < messages.length && same(messages[i + (k - j)], before[k])) k++;
        plan.copy(j, k);
        i += k - j;
      } else {
        plan.add(JSON.stringify(wire(messages[i]!)));
        i++;
      }
    }
    return plan;
  }

  /** The body just written holds `messages`' JSON at `starts`/`ends`. */
  learn(owner: unknown, messages: readonly unknown[], bytes: Buffer, starts: readonly number[], ends: readonly number[]): void {
    this.owner = owner;
    // The array itself, not a copy: a request's messages are a new array for each call, and no one changes it.
    this.sources = messages;
    this.bytes = bytes;
    this.starts = starts;
    this.ends = ends;
  }
}

/**
 * One call's messages as JSON: runs of the last body's bytes and the new
 * messages' text, written straight into the new body (no string of the
 * whole). Its text, when something asks for it, is made then.
 */
class MessagesJson extends JsonText {
  /** Each piece: a new message's JSON, or the first and past-the-last message of a run of the last body's. */
  private readonly pieces: (string | readonly [number, number])[] = [];
  private bytesLength = 2;
  private joined: string | undefined;

  constructor(
    private readonly memo: RequestMemo,
    private readonly owner: unknown,
    private readonly messages: readonly unknown[],
    private readonly from: Buffer,
    private readonly fromStarts: readonly number[],
    private readonly fromEnds: readonly number[],
  ) {
    super("");
  }

  copy(first: number, end: number): void {
    if (this.pieces.length > 0) this.bytesLength += 1;
    this.pieces.push([first, end]);
    this.bytesLength += this.fromEnds[end - 1]! - this.fromStarts[first]!;
  }

  add(json: string): void {
    if (this.pieces.length > 0) this.bytesLength += 1;
    this.pieces.push(json);
    this.bytesLength += Buffer.byteLength(json, "utf8");
  }

  override get text(): string {
    this.joined ??= `[${this.pieces
      .map((piece) => (typeof piece === "string" ? piece : this.from.toString("utf8", this.fromStarts[piece[0]]!, this.fromEnds[piece[1] - 1]!)))
      .join(",")}]`;
    return this.joined;
  }

  override byteLength(): number {
    return this.bytesLength;
  }

  override writeInto(into: Buffer, at: number): number {
    const starts: number[] = [];
    const ends: number[] = [];
    let p = at;
    into[p++] = OPEN;
    for (const [n, piece] of this.pieces.entries()) {
      if (n > 0) into[p++] = COMMA;
      if (typeof piece === "string") {
        starts.push(p);
        p += into.write(piece, p, "utf8");
        ends.push(p);
      } else {
        const [first, end] = piece;
        const base = this.fromStarts[first]!;
        this.from.copy(into, p, base, this.fromEnds[end - 1]!);
        for (let m = first; m < end; m++) {
          starts.push(p + this.fromStarts[m]! - base);
          ends.push(p + this.fromEnds[m]! - base);
        }
        p += this.fromEnds[end - 1]! - base;
      }
    }
    into[p++] = CLOSE;
    this.memo.learn(this.owner, this.messages, into, starts, ends);
    return p - at;
  }
}

/**
 * Whether two messages make the same JSON: the same object, or objects
 * with the same own fields holding the very same values (a tool result's
 * view for the model is made anew each turn from the stored message, with
 * its content and ids; a prompt rebuilt with the same text), in the same
 * order (a `wire` that spreads its message writes them in that order).
 * Nothing a message holds is changed in place.
 */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== other[i] || (a as Record<string, unknown>)[key] !== (b as Record<string, unknown>)[key]) return false;
  }
  return true;
}

/**
 * How far the messages the last call sent are shifted in `messages`: j - i
 * for the first of its front messages after the first found among them (a
 * history that dropped its oldest exchanges, between turns or fitted to
 * the context window within one, is shifted by their count; the first
 * message, the prompt, is compared with the last call's first anyway); 0
 * when none is (each message is then compared where it is: a wrong guess
 * only serializes more).
 */
function alignment(messages: readonly unknown[], before: readonly unknown[]): number {
  for (let i = 1; i < Math.min(ALIGN_PROBES + 1, messages.length); i++) {
    const j = before.indexOf(messages[i]);
    if (j >= 1) return j - i;
  }
  return 0;
}

/**
 * The memos of the sessions whose turns ended last, bounded by the bytes
 * they keep (`maxBytes`: each its last request's body; least recently kept
 * first out): a session's next turn starts from its last call's JSON. A
 * memo whose messages' JSON is under `minBytes` is not kept (a short
 * history is serialized as quickly as it is found), nor one over
 * `maxBytes`.
 */
export class RequestMemos {
  /** Each memo with its size when kept (a kept memo is not used until taken back). */
  private readonly kept = new Map<string, { memo: RequestMemo; size: number }>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly minBytes = 8 * 1024,
  ) {}

  /** The memo `sessionKey`'s last turn left (out of the store while this turn has it), or a new one. */
  take(sessionKey: string): RequestMemo {
    const entry = this.kept.get(sessionKey);
    if (!entry) return new RequestMemo();
    this.drop(sessionKey);
    return entry.memo;
  }

  /** Kept for `sessionKey`'s next turn, when its size is worth it and within the bound. */
  keep(sessionKey: string, memo: RequestMemo): void {
    this.drop(sessionKey);
    const size = memo.size;
    if (memo.messageBytes < this.minBytes || size > this.maxBytes) return;
    this.kept.set(sessionKey, { memo, size });
    this.bytes += size;
    for (const key of this.kept.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(key);
    }
  }

  /** Forgets `sessionKey`'s memo (its history was cleared). */
  forget(sessionKey: string): void {
    this.drop(sessionKey);
  }

  /** Bytes kept, all sessions together. */
  get size(): number {
    return this.bytes;
  }

  private drop(sessionKey: string): void {
    const entry = this.kept.get(sessionKey);
    if (!entry) return;
    this.kept.delete(sessionKey);
    this.bytes -= entry.size;
  }
}
