import { JsonText } from "./json-text.js";

/** Messages searched from the front of a request for one the memo's text holds (the prompt and a note are new each turn). */
const ALIGN_PROBES = 4;

/**
 * The JSON of the messages a session's last model call sent, kept for its
 * next one. A turn's calls send the same prompt and history, then the
 * turn's messages so far, each call a few more than the one before; and
 * the next turn sends the same history objects again (the store's own,
 * never changed in place), less the oldest exchanges the history let go,
 * plus the last turn's messages as stored. So each call's text keeps,
 * message by message, the text of every message it sends that the call
 * before sent too (the same object, found at the same distance from where
 * it was: a history shifted by what it dropped), and serializes only the
 * rest. On a long conversation that is most of a request body's JSON made
 * once instead of once a call. A turn takes it from its session's
 * RequestMemos and gives it back when it ends.
 */
export class RequestMemo {
  private owner: unknown;
  private sources: readonly unknown[] = [];
  /** The JSON array of the sources' wire messages. */
  private text = "[]";
  /** Where each source's JSON ends in `text` (the next one starts after its comma). */
  private ends: number[] = [];

  /** Characters of the text kept (what RequestMemos counts). */
  get size(): number {
    return this.sources.length === 0 ? 0 : this.text.length;
  }

  /**
   * `messages` as the JSON array of `wire(message)` for each: exactly
   * `JSON.stringify(messages.map(wire))`. The text of a message the last
   * call of the same `owner` sent too (the same object, or one whose own
   * fields hold the very same values) is taken from it; only the others are
   * serialized. `wire` must make each message's JSON from that message's
   * own fields alone.
   */
  messagesJson<M>(owner: unknown, messages: readonly M[], wire: (message: M) => unknown): JsonText {
    const before = this.sources;
    const shift = owner === this.owner ? alignment(messages, before) : undefined;
    const oldText = this.text;
    const oldEnds = this.ends;
    const startOf = (j: number) => (j === 0 ? 1 : oldEnds[j - 1]! + 1);
    const items: string[] = [];
    const ends: number[] = [];
    // Characters so far: the "[" and the items with their commas.
    let length = 1;
    let reused = 0;
    let i = 0;
    while (i < messages.length) {
      if (items.length > 0) length += 1;
      // The first message (the system prompt, made anew each turn) is the last call's first, whatever the history dropped.
      const j = shift === undefined ? -1 : i === 0 ? 0 : i + shift;
      if (j >= 0 && j < before.length && same(messages[i], before[j])) {
        // A run of messages the last call sent in the same order: one slice of its text.
        let k = j + 1;
        while (k < before.length && i + (k - j) < messages.length && same(messages[i + (k - j)], before[k])) k++;
        const from = startOf(j);
        items.push(oldText.slice(from, oldEnds[k - 1]));
        for (let m = j; m < k; m++) ends.push(length + oldEnds[m]! - from);
        length += oldEnds[k - 1]! - from;
        reused += k - j;
        i += k - j;
      } else {
        const json = JSON.stringify(wire(messages[i]!));
        items.push(json);
        length += json.length;
        ends.push(length);
        i++;
      }
    }
    // The very messages of the last call: its text as it is.
    const text = shift === 0 && reused === before.length && messages.length === before.length ? oldText : `[${items.join(",")}]`;
    this.owner = owner;
    // The array itself, not a copy: a request's messages are a new array for each call, and no one changes it.
    this.sources = messages;
    this.text = text;
    this.ends = ends;
    return new JsonText(text);
  }
}

/**
 * Whether two messages make the same JSON: the same object, or objects
 * with the same own fields holding the very same values (a tool result's
 * view for the model is made anew each turn from the stored message, with
 * its content and ids; a prompt rebuilt with the same text). Nothing a
 * message holds is changed in place.
 */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || (a as Record<string, unknown>)[key] !== (b as Record<string, unknown>)[key]) return false;
  }
  return true;
}

/**
 * How far the messages the last call sent are shifted in `messages`: j - i
 * for the first of its front messages found among them (a history that
 * dropped its oldest exchange is shifted by their count); undefined when
 * none is.
 */
function alignment(messages: readonly unknown[], before: readonly unknown[]): number | undefined {
  if (before.length === 0) return undefined;
  for (let i = 0; i < Math.min(ALIGN_PROBES, messages.length); i++) {
    const j = before.indexOf(messages[i]);
    if (j >= 0) return j - i;
  }
  return undefined;
}

/**
 * The memos of the sessions whose turns ended last, bounded by the
 * characters of text they keep (`maxChars`, least recently kept first out):
 * a session's next turn starts from its last call's JSON. A memo under
 * `minChars` is not kept (a short history is serialized as quickly as it
 * is found), nor one over `maxChars`.
 */
export class RequestMemos {
  /** Each memo with its size when kept (a kept memo is not used until taken back). */
  private readonly kept = new Map<string, { memo: RequestMemo; size: number }>();
  private chars = 0;

  constructor(
    private readonly maxChars: number,
    private readonly minChars = 8 * 1024,
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
    if (size < this.minChars || size > this.maxChars) return;
    this.kept.set(sessionKey, { memo, size });
    this.chars += size;
    for (const key of this.kept.keys()) {
      if (this.chars <= this.maxChars) break;
      this.drop(key);
    }
  }

  /** Forgets `sessionKey`'s memo (its history was cleared). */
  forget(sessionKey: string): void {
    this.drop(sessionKey);
  }

  /** Characters of text kept, all sessions together. */
  get size(): number {
    return this.chars;
  }

  private drop(sessionKey: string): void {
    const entry = this.kept.get(sessionKey);
    if (!entry) return;
    this.kept.delete(sessionKey);
    this.chars -= entry.size;
  }
}
