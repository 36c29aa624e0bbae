import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { SessionCache } from "../../src/session/session-cache.js";
import { jsonBytes } from "../../src/session/size.js";

/**
 * Property: whatever a history store is asked to do (appends that drop old
 * exchanges, exchanges made to fit, replaces, restores, clears), the bytes
 * it counts are exactly the UTF-8 bytes of the JSON of what it holds, and
 * each session stays within its limits. Sizes are measured again when
 * messages are dropped, so the count must never drift from what is held.
 */

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.integer({ min: 100, max: 3000 }).map((n) => "é".repeat(n)),
);

const message: fc.Arbitrary<ChatMessage> = fc.oneof(
  text.map((content): ChatMessage => ({ role: "user", content })),
  text.map((content): ChatMessage => ({ role: "assistant", content })),
  fc.tuple(fc.nat(9), text).map(([n, content]): ChatMessage => ({ role: "tool", tool_call_id: `c${n}`, content })),
  fc
    .nat(9)
    .map((n): ChatMessage => ({ role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] })),
);

const key = fc.constantFrom("a", "b", "c");
const op = fc.oneof(
  fc.record({ kind: fc.constant("append" as const), key, messages: fc.array(message, { maxLength: 6 }) }),
  fc.record({ kind: fc.constant("replace" as const), key, messages: fc.array(message, { maxLength: 6 }) }),
  fc.record({ kind: fc.constant("restore" as const), key, messages: fc.array(message, { maxLength: 6 }) }),
  fc.record({ kind: fc.constant("clear" as const), key }),
);

const bytesOf = (messages: readonly ChatMessage[]) => messages.reduce((sum, m) => sum + jsonBytes(m), 0);

describe("history bytes", () => {
  it("the bytes a store counts are always the bytes of what it holds, and every session keeps within its limits", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.integer({ min: 2, max: 8 }), fc.integer({ min: 1024, max: 8192 }), (ops, maxMessages, maxBytes) => {
        const store = new SessionCache({ maxMessages, maxBytes, maxSessions: 2, maxTotalBytes: 3 * maxBytes });
        for (const o of ops) {
          if (o.kind === "append") store.append(o.key, o.messages);
          else if (o.kind === "replace") store.replace(o.key, o.messages);
          else if (o.kind === "restore") store.restore(o.key, structuredClone(o.messages), 0);
          else store.clear(o.key);
          let total = 0;
          for (const k of store.keys()) {
            const held = store.get(k);
            total += bytesOf(held);
            expect(held[0]?.role).toBe("user");
            expect(held.length <= maxMessages && bytesOf(held) <= maxBytes).toBe(true);
          }
          expect(store.bytes).toBe(total);
        }
      }),
      { numRuns: 300 },
    );
  });
});
