import { type Api, ApiError, errorOf, readEvents } from "./api.js";
import type { ApprovalNotice, AskCards, QuestionNotice } from "./asks.js";
import { Echoes } from "./echoes.js";
import { type PlanPanel, type PlanPhase, phasesOfTodos } from "./plan.js";
import { type SessionKey, keyPath } from "./session-key.js";
import type { SubagentList, SubagentNotice } from "./subagents.js";
import type { Delivery, HistoryMessage, Transcript, TurnView } from "./transcript.js";

/** Messages of history shown when a session opens. */
const HISTORY_LIMIT = 200;
/** Waits before the event stream is opened again after it ended or failed: doubling from the first to the last. */
const RECONNECT_MS = { first: 1000, max: 30_000 } as const;

export interface ConversationParts {
  api: Api;
  transcript: Transcript;
  plan: PlanPanel;
  subagents: SubagentList;
  /** What waits for the person: approval requests and ask_user questions. */
  asks: AskCards;
  /** The status line: what the session is doing, whether its stream is live. */
  status(text: string): void;
  /** A message of the page's own is under way (the composer waits; Stop shows). */
  busy(busy: boolean): void;
  /** A turn of the session ended (the session list may have changed). */
  turnEnded(): void;
  /** The gateway cannot be reached (`reason`), or can again (undefined): the page's banner. */
  reachable(reason: string | undefined, retryInMs?: number): void;
  /** The session shows nothing: the first screen goes in the transcript. */
  welcome(): void;
}

/** The answer of a message (`turn.end`'s data, `POST /v1/chat`'s JSON). */
interface ChatAnswer {
  reply: string;
  delivered: Delivery[];
  stopped?: boolean;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const isClear = (text: string) => /^\/(clear|new)\s*$/i.test(text.trim());

/**
 * The open session: its history, plan and event stream (deliveries and
 * notices while the person is idle), and the person's messages, each a
 * streamed `POST /v1/chat` drawn as it happens.
 */
export class Conversation {
  session: SessionKey | undefined;
  private watching: AbortController | undefined;
  private readonly echoes = new Echoes();
  private sending = false;
  /** What this conversation last put on the status line. */
  private statusLine = "";
  /** Whether the session's event stream is open now. */
  private live = false;
  /** The page's own message being drawn (a subagent's start labels its chip). */
  private turn: TurnView | undefined;

  constructor(private readonly parts: ConversationParts) {
    parts.transcript.retry = (text) => void this.send(text);
  }

  get isSending(): boolean {
    return this.sending;
  }

  /** Shows a session: history and plan first, then its event stream. */
  async open(session: SessionKey): Promise<void> {
    this.close();
    this.session = session;
    const { transcript, plan, subagents, api, asks } = this.parts;
    transcript.clear();
    transcript.agent = session.agent;
    plan.clear();
    subagents.clear();
    asks.clear();
    this.echoes.reset();
    const watching = new AbortController();
    this.watching = watching;
    const [history, waiting] = await Promise.all([
      api.json<{ messages: HistoryMessage[]; total: number }>(`v1/sessions/${keyPath(session.key)}/history?limit=${HISTORY_LIMIT}`),
      api.json<{ approvals: ApprovalNotice[]; questions: QuestionNotice[] }>(`v1/sessions/${keyPath(session.key)}/approvals`),
      this.loadPlan(),
    ]);
    if (watching.signal.aborted) return;
    for (const approval of waiting.approvals) asks.requested(approval);
    for (const question of waiting.questions) asks.asked(question);
    if (history.total > history.messages.length) transcript.note(`${history.total - history.messages.length} earlier messages are not shown.`);
    transcript.history(history.messages, session.agent);
    if (transcript.empty) this.parts.welcome();
    void this.watch(session, watching.signal);
  }

  /** The first screen again (the agent's tools changed while nothing was said yet). */
  showWelcome(): void {
    if (this.session && this.parts.transcript.empty) this.parts.welcome();
  }

  close(): void {
    this.watching?.abort();
    this.watching = undefined;
    this.session = undefined;
  }

  /** Sends a message (or a slash command) and draws its turn as it streams. */
  async send(text: string): Promise<void> {
    const session = this.session;
    if (!session || this.sending) return;
    const { api, transcript } = this.parts;
    this.sending = true;
    this.echoes.begin();
    this.parts.busy(true);
    const clearing = isClear(text);
    transcript.dropWelcome();
    if (!clearing) transcript.user(text);
    const turn = transcript.turn(session.agent, text);
    this.turn = turn;
    const here = () => this.session === session;
    let answer: ChatAnswer | undefined;
    let failed = false;
    try {
      const res = await api.post("v1/chat", { message: text, session: session.chatId, agent: session.agent, stream: true });
      // It answered: whatever said it could not be reached is over.
      if (here()) this.parts.reachable(undefined);
      if (!res.ok) {
        const error = await errorOf(res);
        failed = true;
        if (here()) turn.fail(error.code, error.message);
      } else {
        await readEvents(res, (event, data) => {
          if (!here()) return;
          if (event === "turn.end") answer = data as ChatAnswer;
          else if (event === "error") {
            failed = true;
            const { code, message } = data as { code: string; message: string };
            turn.fail(code, message);
          } else this.onMessageEvent(turn, event, data);
        });
      }
    } catch (error) {
      failed = true;
      if (here()) {
        turn.fail("network", `The gateway could not be reached (${error instanceof Error ? error.message : String(error)}). Retry sends the message again.`);
        this.parts.reachable("The gateway is not answering.");
      }
    }
    this.turn = undefined;
    if (here() && !(answer && clearing)) this.status(this.live ? "live" : "reconnecting…");
    if (here() && answer) this.answered(turn, answer, clearing);
    else if (here() && !failed) turn.fail("disconnected", "the connection to the gateway closed before the answer was complete");
    this.sending = false;
    this.parts.busy(false);
    for (const other of this.echoes.end()) if (here()) transcript.delivery(other);
    this.parts.turnEnded();
  }

  /** The person's decision on an approval request (the history records it as the page's). */
  async decide(id: string, decision: "allow" | "deny" | "allow_session"): Promise<void> {
    const session = this.session;
    if (!session) return;
    const res = await this.parts.api.fetch(`v1/sessions/${keyPath(session.key)}/approvals/${encodeURIComponent(id)}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-picoclaw-client": "page" },
      body: JSON.stringify({ decision }),
    });
    if (!res.ok && this.session === session) {
      const error = await errorOf(res);
      this.parts.transcript.note(error.message);
    }
  }

  /** The answer to an ask_user question: the session's next message, which the waiting turn takes (it starts no turn of its own). */
  async answer(text: string): Promise<void> {
    const session = this.session;
    if (!session || text.trim() === "") return;
    this.parts.transcript.user(text);
    const res = await this.parts.api.post("v1/chat", { message: text, session: session.chatId, agent: session.agent });
    if (!res.ok && this.session === session) {
      const error = await errorOf(res);
      this.parts.transcript.error(error.code, error.message);
    }
  }

  /**
   * A command whose reply is the page's to use, not the transcript's (the
   * plan editor's `/todo`, `/stop`): its reply is expected on the event
   * stream, and dropped there.
   */
  async command(text: string): Promise<string> {
    const session = this.session;
    if (!session) throw new Error("no session is open");
    this.echoes.begin();
    try {
      const res = await this.parts.api.post("v1/chat", { message: text, session: session.chatId, agent: session.agent });
      if (!res.ok) throw await errorOf(res);
      const answer = (await res.json()) as ChatAnswer;
      for (const delivery of answer.delivered) this.echoes.shown(delivery);
      return answer.reply;
    } finally {
      for (const other of this.echoes.end()) if (this.session === session) this.parts.transcript.delivery(other);
    }
  }

  /**
   * `/stop`: the running turn and every subagent of the session. Its reply
   * goes into the transcript when the page's own message was not running
   * (that message's answer says it was stopped).
   */
  async stop(): Promise<void> {
    const ownMessageRunning = this.sending;
    try {
      const reply = await this.command("/stop");
      if (!ownMessageRunning) this.parts.transcript.note(reply);
    } catch (error) {
      this.parts.transcript.error(error instanceof ApiError ? error.code : "error", error instanceof Error ? error.message : String(error));
    }
  }

  private status(text: string): void {
    this.statusLine = text;
    this.parts.status(text);
  }

  private answered(turn: TurnView, answer: ChatAnswer, clearing: boolean): void {
    const { transcript, plan, subagents } = this.parts;
    // Deliveries kept while no stream was open come first in `delivered`; the stream did not carry them.
    const own = turn.ownDeliveries + (answer.stopped ? 1 : 0);
    const earlier = answer.delivered.slice(0, Math.max(0, answer.delivered.length - own));
    if (clearing) {
      transcript.clear();
      plan.clear();
      subagents.clear();
      this.parts.asks.clear();
      this.status(answer.reply.split("\n")[0] ?? "Cleared.");
      this.parts.welcome();
      return;
    }
    for (const delivery of earlier) transcript.delivery(delivery, "while you were away");
    turn.end(answer.stopped ? answer.reply : undefined);
  }

  /** An event of the person's own message's stream. */
  private onMessageEvent(turn: TurnView, event: string, data: unknown): void {
    const d = data as Record<string, unknown>;
    switch (event) {
      case "turn.start":
        this.status("working…");
        return;
      case "text.delta":
        turn.textDelta(String(d.text ?? ""));
        return;
      case "tool.start":
        turn.toolStart(String(d.id), String(d.name));
        return;
      case "tool.end":
        turn.toolEnd(String(d.id), d.is_error === true);
        return;
      case "delivery": {
        const delivery = data as Delivery;
        this.echoes.shown(delivery);
        turn.delivery(delivery);
        return;
      }
      default:
        this.onNotice(event, d);
    }
  }

  /** A notice of the session, from either stream: the plan, subagents, what waits for the person. */
  private onNotice(event: string, data: Record<string, unknown>): void {
    const { asks } = this.parts;
    if (event === "approval.requested") asks.requested(data as unknown as ApprovalNotice);
    else if (event === "question.asked") asks.asked(data as unknown as QuestionNotice);
    else if (event === "approval.resolved" || event === "question.answered") asks.resolved(String(data.id));
    else if (event === "plan.updated") {
      // A list-style plan is read again: its view has each item's priority, which the notice leaves out.
      if (data.session_key === this.session?.key) {
        this.parts.plan.render(data.plan as PlanPhase[]);
        if (data.style === "list") void this.loadPlan().catch(() => {});
      }
    } else if (event === "plan.failed") {
      if (data.session_key === this.session?.key) this.parts.plan.failed(String(data.message ?? "Todo update failed."));
    } else if (event === "subagent.start") {
      const notice = data as unknown as SubagentNotice;
      this.parts.subagents.start(notice);
      if (notice.label) this.turn?.subagentLabel(notice.label);
    } else if (event === "subagent.end") this.parts.subagents.end(data as unknown as SubagentNotice);
  }

  private async loadPlan(): Promise<void> {
    const session = this.session;
    if (!session) return;
    try {
      const todos = await this.parts.api.json<unknown>(`v1/sessions/${keyPath(session.key)}/todos`);
      if (this.session === session) this.parts.plan.render(phasesOfTodos(todos));
    } catch (error) {
      // A gateway without the todo feature has no such route: no plan, then.
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }

  /** The session's event stream, opened again (after a wait) whenever it ends, until the session is closed. */
  private async watch(session: SessionKey, signal: AbortSignal): Promise<void> {
    let wait: number = RECONNECT_MS.first;
    let first = true;
    while (!signal.aborted) {
      try {
        const res = await this.parts.api.fetch(`v1/sessions/${keyPath(session.key)}/events`, { signal });
        if (res.ok) {
          this.parts.reachable(undefined);
          // What changed while the stream was down: the plan is read again.
          if (!first) await this.loadPlan();
          first = false;
          wait = RECONNECT_MS.first;
          this.live = true;
          if (!this.sending) this.status("live");
          try {
            await readEvents(res, (event, data) => {
              if (!signal.aborted) this.onSessionEvent(event, data as Record<string, unknown>);
            });
          } finally {
            this.live = false;
          }
        } else {
          const error = await errorOf(res);
          if (res.status === 400 || res.status === 404) {
            this.status(error.message);
            return;
          }
          // A proxy in front answering for a gateway that is gone, or a gateway stopping.
          if (res.status >= 500) this.parts.reachable(`The gateway answered ${res.status} (${error.message}).`, wait);
        }
      } catch {
        // A dropped connection, or no gateway at all: open it again below; the banner says so meanwhile.
        if (!signal.aborted) this.parts.reachable("The gateway is not answering.", wait);
      }
      if (signal.aborted) return;
      this.status("reconnecting…");
      await sleep(wait, signal);
      wait = Math.min(wait * 2, RECONNECT_MS.max);
    }
  }

  /** An event of the session's stream: another turn's deliveries, every notice. */
  private onSessionEvent(event: string, data: Record<string, unknown>): void {
    switch (event) {
      case "delivery": {
        const delivery = data as unknown as Delivery;
        if (this.echoes.arrived(delivery)) this.parts.transcript.delivery(delivery);
        return;
      }
      case "turn.start":
        if (!this.sending) this.status("working…");
        return;
      case "turn.end":
        // Only "working…" is this notice's to end: it can come after the page's own answer set the line (a
        // turn's end read on the session's stream later than a /clear's answer on its own), and must not undo it.
        if (!this.sending && this.statusLine === "working…") this.status("live");
        this.parts.turnEnded();
        return;
      case "shutdown":
        this.status("the gateway is stopping");
        return;
      default:
        this.onNotice(event, data);
    }
  }
}
