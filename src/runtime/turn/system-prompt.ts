import type { AgentDefinition } from "../../agents/agent.js";
import { cutToBytes } from "../../bytes.js";
import { abortReason, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { PromptSection } from "../../port/prompt.js";
import { untilAborted } from "../../signals.js";

/**
 * The system prompt of a turn: the AGENT.md body, then the features'
 * sections in their order, each within its bound. The same inputs give the
 * same text, byte for byte (a provider's prompt caching depends on it). A
 * section that fails is left out of that turn, with a warning: the turn
 * goes on.
 */
export class SystemPrompt {
  /** `sections`: the features' (collected as they are set up; each bound is checked then). */
  constructor(
    private readonly sections: readonly PromptSection[],
    private readonly logger: Logger,
  ) {}

  async for(agent: AgentDefinition, sessionKey: string, signal: AbortSignal): Promise<string> {
    if (this.sections.length === 0) return agent.prompt;
    // The sections are read side by side (each reads its own files) and waited for together: one listener on the
    // turn's signal, not one a section, so a section that ignores its signal still does not hold the turn past its
    // deadline or /stop. A section that fails is left out; the others keep their order.
    const texts = this.sections.map((section) => settle(() => section.text({ agent, sessionKey, signal })));
    // Settled outcomes never reject: only the turn's abort ends the wait early (with its reason).
    const settled = await untilAborted(Promise.all(texts), signal);
    // A section that gave up because the turn was aborted is no failure to warn of: the turn ends.
    if (signal.aborted) throw abortReason(signal);
    const parts = agent.prompt === "" ? [] : [agent.prompt];
    this.sections.forEach((section, i) => {
      const outcome = settled[i]!;
      if ("error" in outcome) {
        this.logger.warn(`prompt section "${section.name}" failed for ${sessionKey}, left out of this turn: ${messageOf(outcome.error)}`);
        return;
      }
      const text = outcome.text;
      if (text !== undefined && text.trim() !== "") parts.push(bounded(section, text.trim()));
    });
    return parts.join("\n\n");
  }
}

type Settled = { text: string | undefined } | { error: unknown };

/** What a section gave, or why it failed (thrown at once or rejected), never a rejection. */
function settle(read: () => Promise<string | undefined> | string | undefined): Promise<Settled> {
  try {
    return Promise.resolve(read()).then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    );
  } catch (error) {
    return Promise.resolve({ error });
  }
}

/** The section's text within its bytes: cut at the last whole line that fits, with a note saying so (when the note itself fits). */
function bounded(section: PromptSection, text: string): string {
  if (Buffer.byteLength(text, "utf8") <= section.maxBytes) return text;
  const note = `\n[The ${section.name} section was cut: it is over ${section.maxBytes} bytes.]`;
  const room = section.maxBytes - Buffer.byteLength(note, "utf8");
  if (room <= 0) return cutToBytes(text, section.maxBytes);
  const start = cutToBytes(text, room);
  const line = start.lastIndexOf("\n");
  return `${line > 0 ? start.slice(0, line) : start}${note}`;
}
