// A plugin tool with per-session state: notes the model keeps for this
// conversation. ctx.state belongs to this tool, agent and session; /clear
// and the end of a subagent drop it, as they drop the todo plan.
import { defineTool, toolResult, z } from "picoclaw-ts";

const MAX_NOTES = 50;

export default defineTool({
  name: "notes",
  description:
    "Short notes for this conversation: add one, list them, or clear them. Use it for facts you must not forget later in the conversation (names, numbers, decisions). The user does not see the results.",
  parameters: z.object({
    action: z.enum(["add", "list", "clear"]),
    text: z.string().min(1).max(500).optional().describe("The note, for add"),
  }),
  execute: ({ action, text }, ctx) => {
    const notes = ctx.state.get() ?? [];
    if (action === "add") {
      if (!text) return toolResult.error("add needs text");
      if (notes.length >= MAX_NOTES) return toolResult.error(`there are already ${MAX_NOTES} notes; clear some first`);
      ctx.state.set([...notes, text]);
      return toolResult.silent(`Noted (${notes.length + 1} notes).`);
    }
    if (action === "clear") {
      ctx.state.delete();
      return toolResult.silent("Notes cleared.");
    }
    return toolResult.silent(notes.length ? notes.map((n, i) => `${i + 1}. ${n}`).join("\n") : "No notes yet.");
  },
});
