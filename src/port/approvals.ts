/**
 * Approvals and questions as the front ends see them (the chat page through
 * the approvals route, Telegram, the REPL): what waits for a person in a
 * session, and how a person answers. The runtime's approvals desk
 * implements it; a feature gets it as the host capability `approvals`.
 */

/** What a person may answer an approval request with. */
export const DECISIONS = ["allow", "deny", "allow_session"] as const;
export type Decision = (typeof DECISIONS)[number];

/** A call waiting for a person, as the approvals route and the front ends show it. */
export interface PendingApproval {
  readonly id: string;
  readonly agentId: string;
  readonly tool: string;
  /** The call's arguments, without configured secrets. */
  readonly arguments: unknown;
  /** The person's session (a subagent's call is asked in its root session). */
  readonly sessionKey: string;
  /** The session the call runs in (the subagent's, for a subagent's call). */
  readonly callSessionKey: string;
  readonly requestedAt: number;
  readonly expiresAt: number;
}

/** An `ask_user` question waiting for the user's next message. */
export interface PendingQuestion {
  readonly id: string;
  readonly agentId: string;
  readonly question: string;
  readonly options: readonly string[];
  readonly sessionKey: string;
  readonly expiresAt: number;
}

export type QuestionOutcome = { readonly answered: true; readonly answer: string } | { readonly answered: false; readonly reason: string };

/** What deciding on an id led to: `unknown` (no such request in that session), `settled` (decided before). */
export type DecideOutcome =
  | { readonly result: "decided"; readonly approval: PendingApproval }
  | { readonly result: "unknown" }
  | { readonly result: "settled"; readonly decision: Decision; readonly by: string };

/** What waits for a person, and how a decision or an answer is given. */
export interface Approvals {
  /** Calls waiting in the (root) session, oldest first. */
  pending(sessionKey: string): PendingApproval[];
  /** `ask_user` questions waiting in the (root) session, oldest first. */
  questions(sessionKey: string): PendingQuestion[];
  /** A person's decision; `by` names who (`page`, `api`, `telegram:<user id>`, `repl`), and is kept in the history. */
  decide(sessionKey: string, id: string, decision: Decision, by: string): DecideOutcome;
  /** Asks the user of the session a question; the user's next message there answers it (the `ask_user` tool). */
  question(request: { agentId: string; sessionKey: string; question: string; options: readonly string[] }, signal: AbortSignal): Promise<QuestionOutcome>;
}
