/**
 * `picoclaw-ts/testing`: the offline scripted model, for tests of agents
 * and tools without a key or a network. A message made only of
 * `CALL <tool> <json>` lines makes it call those tools one per round, then
 * summarise what each returned; any other message is echoed.
 */
import { BuiltinModel } from "./models/builtin.js";

export { BuiltinModel as ScriptedModel };

/** The message that makes the scripted model call these tools, in order. */
export function script(...calls: readonly [tool: string, args?: Readonly<Record<string, unknown>>][]): string {
  return calls.map(([tool, args = {}]) => `CALL ${tool} ${JSON.stringify(args)}`).join("\n");
}
