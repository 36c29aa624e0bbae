import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../src/models/message.js";
import { MemoryHistoryStore } from "../src/session/history.js";

const exchange = (n: number): ChatMessage[] => [
  { role: "user", content: `q${n}` },
  { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] },
  { role: "tool", tool_call_id: `c${n}`, content: "r" },
  { role: "assistant", content: `a${n}` },
];

describe("history store", () => {
  it("keeps at most max messages, dropping whole exchanges from the front", () => {
    const store = new MemoryHistoryStore(10);
    for (let n = 1; n <= 3; n++) store.append("s", exchange(n));
    const kept = store.get("s");
    expect(kept.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["q2", "q3"]);
    expect(kept).toHaveLength(8);
    store.append("s", exchange(4));
    expect(store.get("s")[0]).toEqual({ role: "user", content: "q3" });
    expect(store.get("s")).toHaveLength(8);
  });

  it("hands out copies: changing them changes nothing", () => {
    const store = new MemoryHistoryStore();
    const messages = exchange(1);
    store.append("s", messages);
    (messages[0] as { content: string }).content = "changed";
    store.get("s").pop();
    expect(store.get("s")).toHaveLength(4);
    expect(store.get("s")[0]).toEqual({ role: "user", content: "q1" });
  });
});
