import { SessionState } from "../session/state.js";
import type { ToolState } from "./tool.js";

/**
 * Per-session state of every tool: one value per (agent, session, tool).
 * Register it with the runtime's session lifecycle and `/clear` and the end
 * of a sub-turn drop it.
 */
export class ToolStates extends SessionState<Map<string, unknown>> {
  view(tool: string, agentId: string, sessionKey: string): ToolState {
    return {
      get: () => this.get(agentId, sessionKey)?.get(tool),
      set: (value) => {
        let values = this.get(agentId, sessionKey);
        if (!values) this.set(agentId, sessionKey, (values = new Map()));
        values.set(tool, value);
      },
      delete: () => {
        const values = this.get(agentId, sessionKey);
        if (values?.delete(tool) && values.size === 0) this.delete(agentId, sessionKey);
      },
    };
  }
}
