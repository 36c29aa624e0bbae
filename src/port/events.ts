/**
 * A small typed event bus. Turns, model calls and tools report here; logs,
 * features and streaming views listen. A listener that throws is reported to
 * `onListenerError` and never breaks the turn that emitted.
 *
 * The core's events are listed here. A feature adds its own by augmenting
 * `RuntimeEvents` from its folder (`declare module ".../port/events.js"`),
 * so the core never names a feature's event or knows its payload.
 */

/**
 * Every event names the agent and the session it happened in; every event
 * that happens in a turn names the turn (`turnId`), and in a tool call the
 * call (`callId`), so a trace ties each one to its turn and call.
 */
export interface EventScope {
  agentId: string;
  sessionKey: string;
}

/** The turn (and tool call) a delivery came from; a command's reply has none. */
export interface DeliveryOrigin {
  turnId: string;
  callId?: string;
}
type Scope = EventScope;

export type TurnOutcomeKind = "done" | "limit" | "error" | "aborted";

/** Tokens a turn's model calls used, summed, as the provider reported them. */
/** A turn's tokens, summed over its model calls: `inputTokens` leaves out the prompt tokens read from or written to the cache, counted apart when a provider reported them. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

export interface RuntimeEvents {
  "turn.start": Scope & { turnId: string; text: string };
  /** `usage`: summed over the turn's own model calls (not its subagents'), when the provider reported any. */
  "turn.end": Scope & { turnId: string; outcome: TurnOutcomeKind; durationMs: number; error?: string; usage?: TokenUsage };
  "llm.request": Scope & { turnId: string; model: string; iteration: number; messages: number; tools: number };
  "llm.response": Scope & {
    turnId: string;
    model: string;
    iteration: number;
    toolCalls: number;
    durationMs: number;
    /** From the request to the first piece the model streamed (text, reasoning or a tool call); absent when nothing streamed. */
    firstTokenMs?: number;
    /** Tokens as the provider counted them; the cache fields when it reports prompt caching. */
    usage?: { inputTokens?: number; outputTokens?: number; cacheCreationInputTokens?: number; cacheReadInputTokens?: number };
  };
  /** A piece of the assistant's text as the model streams it (text written before tool calls too). */
  "text.delta": Scope & { turnId: string; text: string };
  "tool.start": Scope & { turnId: string; tool: string; callId: string };
  "tool.end": Scope & {
    turnId: string;
    tool: string;
    callId: string;
    isError: boolean;
    silent: boolean;
    durationMs: number;
    /** What the chat user sees of the result; only for a result that is not silent (never a silent one's text). */
    text?: string;
  };
  /** A tool published structured details about its call (`ctx.publish`): for UIs and listeners, never the model. */
  "tool.update": Scope & { turnId: string; tool: string; callId: string; details: unknown };
  /** Something the chat user sees: non-silent tool output, a command reply, the final reply. */
  delivery: Scope & { from: string; text: string } & Partial<DeliveryOrigin>;
  /** A tool call waits for a person's decision (approval "ask"); `sessionKey` is the person's session (a subagent asks in its root). */
  "approval.requested": Scope & { id: string; tool: string; arguments: unknown; callSessionKey: string; expiresAt: number };
  /** A person (or a timeout, /stop, /clear, shutdown) decided on it. */
  "approval.resolved": Scope & { id: string; tool: string; decision: "allow" | "deny" | "allow_session"; by: string };
  /** `ask_user` waits for the user's next message in the session. */
  "question.asked": Scope & { id: string; question: string; options: readonly string[]; expiresAt: number };
  "question.answered": Scope & { id: string; answered: boolean; by: string };
  /** Per-session state was dropped: `clear` (the /clear command) or `release` (a sub-turn, or a one-message conversation, ended). */
  "session.cleared": Scope & { reason: "clear" | "release" };
}

export type EventName = keyof RuntimeEvents;
export type Listener<K extends EventName> = (payload: RuntimeEvents[K]) => void;

export class EventBus {
  private readonly listeners = new Map<EventName, Set<Listener<never>>>();

  constructor(private readonly onListenerError: (error: unknown, event: EventName) => void = () => {}) {}

  /** Listens to one event type; returns the function that stops listening. */
  on<K extends EventName>(event: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => {
      set.delete(listener as Listener<never>);
      if (set.size === 0) this.listeners.delete(event);
    };
  }

  emit<K extends EventName>(event: K, payload: RuntimeEvents[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<K>)(payload);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }
}
