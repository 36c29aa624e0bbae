import { createHash } from "node:crypto";
import { abortReason, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { ChatMessage } from "../../models/message.js";
import type { EventBus, RuntimeEvents } from "../../port/events.js";
import type { Clock } from "../../port/feature.js";
import type { FeatureState } from "../../session/feature-state.js";
import type { HistoryStore } from "../../session/history.js";
import { isTransientKey, rootKey } from "../../session/key.js";
import type { ClearReason, SessionScoped } from "../../session/state.js";
import type { Timer } from "../../signals.js";
import type { ApprovalAsk, ApprovalGate, ApprovalVerdict } from "../../tools/approval.js";
import type { Redact } from "../../tools/redact.js";
import type { Approvals, DecideOutcome, Decision, PendingApproval, PendingQuestion, QuestionOutcome } from "../../port/approvals.js";

/** What the desk works with. */
export interface DeskParts {
  clock: Clock;
  timer: Timer;
  ids: () => string;
  /** tools.approval_timeout_ms */
  timeoutMs: number;
  /** Where the desk reports what waits and what was decided (logs, the REPL). */
  events: EventBus;
  /** A notice for the session's open streams (its event streams, and the message being answered). */
  notify(sessionKey: string, event: string, data: Readonly<Record<string, unknown>>): void;
  history: Pick<HistoryStore, "append">;
  /** Where requests wait durably, so that a restart can deny and record what was left waiting. */
  state: FeatureState;
  redact: Redact;
  logger: Logger;
  /** Work the runtime waits for on shutdown (a record being written). */
  track(work: Promise<unknown>): void;
  /** Why nobody can answer in this root session (a stateless conversation, `picoclaw agent -m`), or undefined when someone can. */
  nobodyAnswers(sessionKey: string): string | undefined;
  /** Whether a turn of the session runs in another gateway now (a fleet on one store): its request still waits there, and is not this one's to deny. */
  heldElsewhere?(sessionKey: string): Promise<boolean>;
}

interface Waiting {
  readonly approval: PendingApproval;
  /** Kept durably and announced: only then is it listed (a restart would deny it). */
  shown: boolean;
  readonly digest: string;
  /** Settles the call: the decision, who made it, and what the model reads when it is a no. */
  settle(decision: Decision, by: string, reason?: string): void;
}

interface Asking {
  readonly question: PendingQuestion;
  settle(outcome: QuestionOutcome, by: string): void;
}

/** The namespace of the features' durable state where requests wait (no feature may take this name). */
export const APPROVALS_NAMESPACE = "approvals";

/** Decided ids remembered for a second decision's 409 (the newest; older ones are forgotten). */
const REMEMBERED = 1024;
/** Sessions whose allow_session grants are kept at most. */
const MAX_GRANTED = 10_000;

/** What allow_session allows: one agent's tool (a delegated agent is asked for its own). */
const grantOf = (agentId: string, tool: string) => `${agentId}\u0000${tool}`;

/**
 * The approvals desk: every call waiting for a person's decision and every
 * `ask_user` question waiting for an answer, by the person's session (a
 * subagent asks in its root session). A call waits for `allow`, `deny` or
 * `allow_session` (that tool is allowed for the rest of the session), for
 * at most tools.approval_timeout_ms; `/stop`, `/clear`, shutdown and a
 * client that left deny it. Each decision becomes a record in the
 * session's history (who, what, when); requests wait durably, so that a
 * gateway that restarts denies what was left waiting and says so there.
 * Only the waiting call's turn waits: other sessions go on.
 */
export class ApprovalDesk implements Approvals, SessionScoped {
  private readonly waiting = new Map<string, Waiting>();
  private readonly asking = new Map<string, Asking>();
  /** Clears waiting for their session (root key → how many): what asks meanwhile is denied at once. */
  private readonly clears = new Map<string, number>();
  /** Per root session, the agents' tools `allow_session` allowed (`<agent>\u0000<tool>`), the most recently granted session last. */
  private readonly grants = new Map<string, Set<string>>();
  /** Shut down: what asks now is denied at once. */
  private closed = false;
  private readonly settled = new Map<string, { sessionKey: string; decision: Decision; by: string }>();

  readonly gate: ApprovalGate = { ask: (request, signal) => this.ask(request, signal) };

  constructor(private readonly parts: DeskParts) {}

  /** Calls waiting in the session, oldest first. */
  pending(sessionKey: string): PendingApproval[] {
    return [...this.waiting.values()].filter((w) => w.shown && w.approval.sessionKey === sessionKey).map((w) => w.approval);
  }

  /** Questions waiting in the session, oldest first. */
  questions(sessionKey: string): PendingQuestion[] {
    return [...this.asking.values()].filter((a) => a.question.sessionKey === sessionKey).map((a) => a.question);
  }

  /** Requests waiting in all (metrics, tests: it falls back to 0 when they are answered). */
  get size(): number {
    return this.waiting.size + this.asking.size;
  }

  /** A person's decision on a request of the session; an id of another session is `unknown`, as if it did not exist. */
  decide(sessionKey: string, id: string, decision: Decision, by: string): DecideOutcome {
    const waiting = this.waiting.get(id);
    if (waiting?.shown && waiting.approval.sessionKey === sessionKey) {
      waiting.settle(decision, by);
      return { result: "decided", approval: waiting.approval };
    }
    const settled = this.settled.get(id);
    if (settled && settled.sessionKey === sessionKey) return { result: "settled", decision: settled.decision, by: settled.by };
    return { result: "unknown" };
  }

  /**
   * The user's next message in a session with a question waiting: it answers
   * the oldest question (true), and is no turn of its own. False when none waits.
   */
  answer(sessionKey: string, text: string, by: string): boolean {
    const asking = [...this.asking.values()].find((a) => a.question.sessionKey === sessionKey);
    if (!asking) return false;
    asking.settle({ answered: true, answer: text }, by);
    return true;
  }

  /**
   * A clear of the session has arrived and waits for the session (the turns
   * queued before it run first): what waits for a person in it (and below
   * it) is denied now, so that the turn holding the session ends, and so is
   * what asks until the clear is done (`release`, called however the clear
   * ends): nobody is asked about a call whose result the clear wipes, and
   * the clear never waits out a person's approval time behind it.
   */
  clearing(sessionKey: string): () => void {
    const root = rootKey(sessionKey);
    this.clears.set(root, (this.clears.get(root) ?? 0) + 1);
    this.dismiss(root);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.clears.get(root) ?? 1) - 1;
      if (left > 0) this.clears.set(root, left);
      else this.clears.delete(root);
    };
  }

  /** `/clear` is coming: what waits in the session (and below it) is denied now, so that the turn holding the session ends. */
  dismiss(sessionKey: string): void {
    const root = rootKey(sessionKey);
    for (const waiting of [...this.waiting.values()]) {
      if (waiting.approval.sessionKey === root)
        waiting.settle("deny", "clear", `${waiting.approval.tool} was not run: the session was cleared while it waited for approval`);
    }
    for (const asking of [...this.asking.values()]) {
      if (asking.question.sessionKey === root) asking.settle({ answered: false, reason: "the session was cleared before the user answered" }, "clear");
    }
  }

  /** The gateway is shutting down: every request is denied now, so that turns can end well within the grace period rather than be aborted. */
  shutdown(): void {
    this.closed = true;
    for (const waiting of [...this.waiting.values()]) {
      waiting.settle("deny", "shutdown", `${waiting.approval.tool} was not run: the gateway is shutting down`);
    }
    for (const asking of [...this.asking.values()]) asking.settle({ answered: false, reason: "the gateway is shutting down" }, "shutdown");
  }

  /** `/clear` forgets what `allow_session` allowed; a released subagent's requests are denied with it. */
  clearSession(sessionKey: string, reason: ClearReason): void {
    if (reason === "clear") {
      this.grants.delete(rootKey(sessionKey));
      this.dismiss(sessionKey);
      return;
    }
    for (const waiting of [...this.waiting.values()]) {
      if (waiting.approval.callSessionKey === sessionKey) waiting.settle("deny", "release", `${waiting.approval.tool} was not run: its session ended`);
    }
  }

  /**
   * Requests a gateway left waiting when it stopped (a restart, a crash):
   * each is denied, recorded in its session's history, and remembered as
   * decided. A request whose session's turn runs in another gateway now (a
   * fleet on one store: that gateway holds the session's turn, and waits on
   * it) is not a leftover, and is left be. Resolves with how many were denied.
   */
  async recover(): Promise<number> {
    const left = (await this.parts.state.list()).filter((entry) => !this.waiting.has(entry.key));
    let denied = 0;
    for (const entry of left) {
      const kept = entry.value as { sessionKey?: unknown; tool?: unknown; digest?: unknown; requestedAt?: unknown };
      if (typeof kept.sessionKey !== "string" || typeof kept.tool !== "string") {
        await this.parts.state.delete(entry.key);
        continue;
      }
      if (this.parts.heldElsewhere && (await this.parts.heldElsewhere(kept.sessionKey))) continue;
      denied++;
      const approval = { id: entry.key, tool: kept.tool, sessionKey: kept.sessionKey };
      this.remember(entry.key, kept.sessionKey, "deny", "restart");
      // Removed first: a second start never records it twice.
      if (await this.parts.state.delete(entry.key, entry.version)) {
        await this.record(approval, typeof kept.digest === "string" ? kept.digest : "", "deny", "restart", "the gateway restarted while the request waited");
      }
    }
    return denied;
  }

  /** Asks whoever can answer for the session whether the call may run; resolves with the decision. */
  private async ask(request: ApprovalAsk, signal: AbortSignal): Promise<ApprovalVerdict> {
    const sessionKey = rootKey(request.sessionKey);
    if (this.grants.get(sessionKey)?.has(grantOf(request.agentId, request.tool))) return { allowed: true };
    if (this.clears.has(sessionKey)) return { allowed: false, reason: `${request.tool} was not run: the session is being cleared` };
    const nobody = this.closed ? "the gateway is shutting down" : this.parts.nobodyAnswers(sessionKey);
    if (nobody !== undefined) {
      return { allowed: false, reason: `${request.tool} was not run: it needs a person's approval (its approval policy is "ask") and ${nobody}` };
    }
    signal.throwIfAborted();
    const { clock, timeoutMs } = this.parts;
    const shown = this.scrubbed(request.arguments);
    // Of the arguments as shown (secrets scrubbed): a digest of a secret would let one guess it.
    const digest = createHash("sha256")
      .update(JSON.stringify(shown) ?? "")
      .digest("hex");
    const now = clock.now();
    const approval: PendingApproval = {
      id: `ap_${this.parts.ids()}`,
      agentId: request.agentId,
      tool: request.tool,
      arguments: shown,
      sessionKey,
      callSessionKey: request.sessionKey,
      requestedAt: now,
      expiresAt: now + timeoutMs,
    };
    return new Promise<ApprovalVerdict>((resolve, reject) => {
      let done = false;
      /** Kept durably: removed once decided (first, then the record: a crash between them leaves no false "restart" denial). */
      let kept: Promise<unknown> = Promise.resolve();
      const finish = (decision: Decision, by: string, reason: string | undefined, aborted: boolean) => {
        if (done) return;
        done = true;
        cancelTimer();
        signal.removeEventListener("abort", onAbort);
        this.waiting.delete(approval.id);
        this.remember(approval.id, sessionKey, decision, by);
        if (decision === "allow_session") this.grant(sessionKey, grantOf(approval.agentId, approval.tool));
        this.announce("approval.resolved", { agentId: approval.agentId, sessionKey, id: approval.id, tool: approval.tool, decision, by });
        const written = kept
          .then(() => this.parts.state.delete(approval.id))
          .catch((error: unknown) => this.parts.logger.warn(`approval ${approval.id} stays in the state store: ${messageOf(error)}`))
          .then(() => this.record(approval, digest, decision, by, reason));
        this.parts.track(written);
        // The call goes on once its decision is recorded: the history says who decided before anything ran.
        void written.then(() => {
          if (aborted) reject(abortReason(signal));
          else if (decision === "deny") resolve({ allowed: false, reason: reason ?? declined(approval.tool, by) });
          else resolve({ allowed: true });
        });
      };
      const onAbort = () => finish("deny", stoppedBy(signal), `the turn ended: ${messageOf(signal.reason)}`, true);
      const cancelTimer = this.parts.timer(timeoutMs, () =>
        finish(
          "deny",
          "timeout",
          `${approval.tool} was not run: nobody answered its approval request within ${Math.round(timeoutMs / 1000)} s (tools.approval_timeout_ms)`,
          false,
        ),
      );
      // Waiting (and stoppable by /stop, /clear, shutdown) from now on, while it is being kept.
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) return onAbort();
      const waiting: Waiting = { approval, digest, shown: false, settle: (decision, by, reason) => finish(decision, by, reason, false) };
      this.waiting.set(approval.id, waiting);
      kept = this.parts.state.put(approval.id, { sessionKey, tool: request.tool, digest, requestedAt: now }, 0).then(
        () => {
          // Listed and announced once it is kept, unless it was decided meanwhile.
          if (done) return;
          waiting.shown = true;
          this.announce("approval.requested", {
            agentId: approval.agentId,
            sessionKey,
            id: approval.id,
            tool: approval.tool,
            arguments: shown,
            callSessionKey: request.sessionKey,
            expiresAt: approval.expiresAt,
          });
        },
        (error: unknown) => finish("deny", "gateway", `${approval.tool} was not run: its approval request could not be kept (${messageOf(error)})`, false),
      );
    });
  }

  /** Remembers an allow_session grant; past MAX_GRANTED sessions the oldest grants go (their tools are asked for again: the safe side). */
  private grant(sessionKey: string, grant: string): void {
    let granted = this.grants.get(sessionKey);
    if (granted) this.grants.delete(sessionKey);
    else granted = new Set();
    granted.add(grant);
    this.grants.set(sessionKey, granted);
    if (this.grants.size > MAX_GRANTED) this.grants.delete(this.grants.keys().next().value!);
  }

  /**
   * An `ask_user` question: waits for the user's next message in the
   * session (`answer`), at most tools.approval_timeout_ms; rejects with the
   * signal's reason when the turn ends first.
   */
  question(request: { agentId: string; sessionKey: string; question: string; options: readonly string[] }, signal: AbortSignal): Promise<QuestionOutcome> {
    const sessionKey = rootKey(request.sessionKey);
    if (this.clears.has(sessionKey)) return Promise.resolve({ answered: false, reason: "the question was not asked: the session is being cleared" });
    const nobody = this.closed ? "the gateway is shutting down" : this.parts.nobodyAnswers(sessionKey);
    if (nobody !== undefined) return Promise.resolve({ answered: false, reason: `the question was not asked: ${nobody}` });
    signal.throwIfAborted();
    const { timeoutMs } = this.parts;
    const question: PendingQuestion = {
      id: `q_${this.parts.ids()}`,
      agentId: request.agentId,
      // Shown to people: without configured secrets, as a call's arguments are.
      question: this.parts.redact(request.question),
      options: request.options.map((option) => this.parts.redact(option)),
      sessionKey,
      expiresAt: this.parts.clock.now() + timeoutMs,
    };
    return new Promise<QuestionOutcome>((resolve, reject) => {
      let done = false;
      const finish = (outcome: QuestionOutcome, by: string, aborted: boolean) => {
        if (done) return;
        done = true;
        cancelTimer();
        signal.removeEventListener("abort", onAbort);
        this.asking.delete(question.id);
        this.announce("question.answered", { agentId: question.agentId, sessionKey, id: question.id, answered: outcome.answered, by });
        if (aborted) reject(abortReason(signal));
        else resolve(outcome);
      };
      const onAbort = () => finish({ answered: false, reason: "the turn ended" }, stoppedBy(signal), true);
      const cancelTimer = this.parts.timer(timeoutMs, () =>
        finish({ answered: false, reason: `the user did not answer within ${Math.round(timeoutMs / 1000)} s (tools.approval_timeout_ms)` }, "timeout", false),
      );
      signal.addEventListener("abort", onAbort, { once: true });
      this.asking.set(question.id, { question, settle: (outcome, by) => finish(outcome, by, false) });
      this.announce("question.asked", {
        agentId: question.agentId,
        sessionKey,
        id: question.id,
        question: question.question,
        options: question.options,
        expiresAt: question.expiresAt,
      });
    });
  }

  /**
   * Tells the runtime's listeners (the log, the REPL) and the session's
   * open streams, the latter in the wire's words: `agent`, `session_key`,
   * `call_session_key` (only when it is another), `expires_at` (ISO 8601).
   */
  private announce<K extends "approval.requested" | "approval.resolved" | "question.asked" | "question.answered">(event: K, payload: RuntimeEvents[K]): void {
    this.parts.events.emit(event, payload);
    const { agentId, sessionKey, ...rest } = payload as RuntimeEvents[K] & { callSessionKey?: string; expiresAt?: number };
    const { callSessionKey, expiresAt, ...fields } = rest;
    this.parts.notify(sessionKey, event, {
      ...fields,
      agent: agentId,
      session_key: sessionKey,
      ...(callSessionKey === undefined || callSessionKey === sessionKey ? {} : { call_session_key: callSessionKey }),
      ...(expiresAt === undefined ? {} : { expires_at: new Date(expiresAt).toISOString() }),
    });
  }

  private remember(id: string, sessionKey: string, decision: Decision, by: string): void {
    this.settled.set(id, { sessionKey, decision, by });
    if (this.settled.size > REMEMBERED) this.settled.delete(this.settled.keys().next().value!);
  }

  /** The decision as a record in the session's history (never sent to a model); a failure to keep it is logged, not the call's. */
  private async record(
    approval: Pick<PendingApproval, "id" | "tool" | "sessionKey">,
    digest: string,
    decision: Decision,
    by: string,
    note?: string,
  ): Promise<void> {
    if (isTransientKey(approval.sessionKey)) return;
    const at = new Date(this.parts.clock.now()).toISOString();
    const verb = decision === "deny" ? "denied" : decision === "allow" ? "allowed" : "allowed for the session";
    const message: ChatMessage = {
      role: "system",
      content: `Approval ${approval.id}: ${approval.tool} ${verb} by ${by} at ${at}${note ? ` (${note})` : ""}.`,
      record: { type: "approval", id: approval.id, tool: approval.tool, arguments_sha256: digest, decision, by, at, ...(note ? { note } : {}) },
    };
    try {
      await this.parts.history.append(approval.sessionKey, [message]);
    } catch (error) {
      this.parts.logger.warn(
        `the decision on ${approval.id} (${approval.tool}: ${decision} by ${by}) could not be kept in ${approval.sessionKey}: ${messageOf(error)}`,
      );
    }
  }

  /** Arguments as a person is shown them: without configured secrets. */
  private scrubbed(args: unknown): unknown {
    const text = JSON.stringify(args) ?? "null";
    const clean = this.parts.redact(text);
    if (clean === text) return args;
    try {
      return JSON.parse(clean);
    } catch {
      return clean;
    }
  }
}

/** What the model reads when a person said no. */
function declined(tool: string, by: string): string {
  return `The user declined to run ${tool} (denied by ${by}); nothing ran. Do not try the same call again unless they ask; say what you meant to do, or do without it.`;
}

/** Who ended a wait by aborting it: `/stop`, shutdown, or the client that left. */
function stoppedBy(signal: AbortSignal): string {
  const why = messageOf(signal.reason);
  if (/\/stop/.test(why)) return "stop";
  if (/shutting down/.test(why)) return "shutdown";
  return "turn ended";
}
