import { JsonText } from "./json-text.js";

/**
 * What the model calls of one turn share: the JSON of the messages the
 * last call sent. A turn's calls send the same prompt and history, then
 * this turn's messages so far, each call a few more than the one before;
 * so each call's body keeps the text of the messages it has in common with
 * the call before it (the same objects, in the same order, sent by the same
 * provider) and serializes only the rest. On a long conversation that is
 * most of a request body's JSON made once a turn instead of once a call.
 * One per turn, dropped with it: it holds one request's messages.
 */
export class RequestMemo {
  private owner: unknown;
  private sources: readonly unknown[] = [];
  /** The JSON array of the sources' wire messages. */
  private text: string | undefined;

  /**
   * `messages` as the JSON array of `wire(message)` for each. When the last
   * call of the same `owner` sent the first of them (the same objects in
   * the same order), its text is kept and only the rest are serialized;
   * otherwise all are, in one `JSON.stringify`. `wire` must make each
   * message's JSON from that message alone.
   */
  messagesJson<M>(owner: unknown, messages: readonly M[], wire: (message: M) => unknown): JsonText {
    const before = this.sources;
    let kept = this.text !== undefined && owner === this.owner && messages.length >= before.length;
    for (let i = 0; kept && i < before.length; i++) kept = messages[i] === before[i];
    let text: string;
    if (!kept || before.length === 0) text = JSON.stringify(messages.map(wire));
    else if (messages.length === before.length) text = this.text!;
    else text = `${this.text!.slice(0, -1)},${JSON.stringify(messages.slice(before.length).map(wire)).slice(1)}`;
    this.owner = owner;
    // The array itself, not a copy: a request's messages are a new array for each call, and no one changes it.
    this.sources = messages;
    this.text = text;
    return new JsonText(text);
  }
}
