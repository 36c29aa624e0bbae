/**
 * Asking a person before a call runs. A tool set knows which of its tools
 * need a yes (their approval policy is `ask`); the runtime hands each call
 * a gate that asks whoever can answer for the session (the chat page,
 * Telegram, the REPL, the API) and waits, under the call's signal.
 */

/** A tool's approval policy: run its calls, ask a person first, or hide it from the agent. */
export type Approval = "allow" | "ask" | "deny";

/** A call that waits for a person's decision. */
export interface ApprovalAsk {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly turnId: string;
  readonly callId: string;
  readonly tool: string;
  /** The call's arguments, checked against the tool's schema. */
  readonly arguments: unknown;
}

/** The decision: run it, or do not, with the text the model reads instead of a result. */
export type ApprovalVerdict = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

export interface ApprovalGate {
  /** Resolves with the decision; rejects with the signal's reason when it aborts first (`/stop`, shutdown). */
  ask(request: ApprovalAsk, signal: AbortSignal): Promise<ApprovalVerdict>;
}

/** What the model reads when a call under `ask` has nobody to ask. */
export const NOBODY_TO_ASK = "nobody can approve it here";
