export type ChildOutcome = "done" | "error" | "aborted" | "timeout";

declare module "../../port/events.js" {
  interface RuntimeEvents {
    /** A subagent started (`sessionKey` is the child's key). */
    "subagent.start": EventScope & { parentKey: string; childKey: string; label: string };
    /** A subagent ended: exactly once per child, however it ended. */
    "subagent.end": EventScope & { parentKey: string; childKey: string; label: string; outcome: ChildOutcome; durationMs: number };
  }
}
