import { type SessionScoped, SessionState } from "../../session/state.js";

/**
 * What follows a failed todo call, in either style (oh-my-pi's rule): the
 * model's next turn in the session gets one hidden reminder that the plan
 * did not change (a system note, never shown to the user nor kept in the
 * history), and the user's views are told once that the plan they see may be
 * stale (`plan.failed`: the chat page's plan panel, a chat channel's line).
 * A successful call forgets a reminder still waiting and ends the stale spell.
 */

/** The topic of the reminder among the next turn's notes. */
export const TODO_REMINDER_TOPIC = "todo-error-reminder";

/** What the model's next turn is told after a failed todo call. */
export const TODO_REMINDER =
  "[Your last todo call failed, so the plan did not change and your progress is not visible until a todo call succeeds. Fix the call (see its error) and send it again before going on.]";

/** What the user is told, once, when a todo call fails (until the next successful one). */
export const TODO_FAILED = "Todo update failed: the plan did not change, so the plan shown may be stale until the agent's next successful todo call.";

export interface FailureSinks {
  /** Sets (a text) or forgets (undefined) the session's reminder for the agent's next turn. */
  remind(agentId: string, sessionKey: string, note: string | undefined): void;
  /** Tells the session's views that the plan may be stale. */
  notify(agentId: string, sessionKey: string): void;
}

export interface TodoFailures extends SessionScoped {
  /** A todo call ended: failed (`isError`) or well. */
  ended(agentId: string, sessionKey: string, isError: boolean): void;
  /** Whether the last todo call of the agent in the session failed (no successful one since). */
  isStale(agentId: string, sessionKey: string): boolean;
}

export function todoFailures(sinks: FailureSinks): TodoFailures {
  // One entry per (agent, session) whose last call failed: a success, /clear or a sub-turn's end removes it.
  const stale = new SessionState<true>();
  return {
    ended(agentId, sessionKey, isError) {
      if (!isError) {
        sinks.remind(agentId, sessionKey, undefined);
        stale.delete(agentId, sessionKey);
        return;
      }
      sinks.remind(agentId, sessionKey, TODO_REMINDER);
      if (stale.has(agentId, sessionKey)) return;
      stale.set(agentId, sessionKey, true);
      sinks.notify(agentId, sessionKey);
    },
    isStale: (agentId, sessionKey) => stale.has(agentId, sessionKey),
    clearSession: (sessionKey) => stale.clearSession(sessionKey),
  };
}
