import { z } from "zod";
import { toolGate } from "../../config/schema.js";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { defineTool, toolResult } from "../../tools/tool.js";

const parameters = z.strictObject({
  question: z.string().trim().min(1).max(2000).describe("The question, in the user's language; one thing at a time."),
  options: z.array(z.string().trim().min(1).max(100)).max(10).optional().describe("Answers to offer as buttons (the user may still type another)."),
});

/**
 * `ask_user` (`tools.ask_user`): the model asks the user a question and the
 * turn waits for the answer, which is the user's next message in that
 * session (it starts no turn of its own), for at most
 * tools.approval_timeout_ms. The chat page shows the options as buttons,
 * Telegram as a reply keyboard. Where nobody can answer (a stateless
 * request, `picoclaw agent -m`) the result says so at once.
 */
export const askUserFeature = defineFeature({
  name: "ask-user",
  needs: ["approvals"],
  config: { tools: { ask_user: toolGate(true) } },
  setup(host) {
    const tool = defineTool({
      name: "ask_user",
      description:
        "Ask the user a question and wait for the answer (their next message). Use it when you cannot go on without a decision or a fact only they have; not for things you can find out yourself.",
      parameters,
      enabledByDefault: true,
      // It waits for a person, as long as tools.approval_timeout_ms allows.
      timeoutMs: 0,
      execute: async (args, ctx) => {
        const outcome = await host.approvals.question(
          { agentId: ctx.agentId, sessionKey: ctx.sessionKey, question: args.question, options: args.options ?? [] },
          ctx.signal,
        );
        if (outcome.answered) return toolResult.silent(`The user answered: ${outcome.answer}`);
        return toolResult.error(`No answer: ${outcome.reason}. Go on without it, or ask again later.`);
      },
    });
    return { origin: () => BUILT_IN_ORIGIN, tools: [tool] };
  },
});
