export type ChildOutcome = "done" | "error" | "aborted" | "timeout";

/** The parent's turn and the tool call that started a child (a trace's parent span). */
export interface ParentCall {
  turnId: string;
  callId: string;
}

declare module "../../port/events.js" {
  interface RuntimeEvents {
    /** A subagent started (`sessionKey` is the child's key; `turnId` and `callId` are the parent's turn and the call that started it). */
    "subagent.start": EventScope & ParentCall & { parentKey: string; childKey: string; label: string };
    /** A subagent ended: exactly once per child, however it ended. */
    "subagent.end": EventScope & ParentCall & { parentKey: string; childKey: string; label: string; outcome: ChildOutcome; durationMs: number };
  }
}
