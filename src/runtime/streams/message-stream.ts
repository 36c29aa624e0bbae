import type { EventBus } from "../../port/events.js";
import type { Delivery } from "../../port/feature.js";

/**
 * One message's events, in order, as they happen: the one stream every
 * outside protocol of a message is a view of (`POST /v1/chat` with
 * `"stream": true`, the OpenAI-compatible API). It holds what the chat user
 * may see and nothing of the plumbing: the turn starting, the model's text
 * as it streams, tool calls starting and ending (with the text the user
 * sees of a result that is not silent, never a silent one's), deliveries,
 * and the session's notices (a feature's: `plan.updated`, `subagent.start`,
 * `subagent.end`). A sub-turn's own events never appear; its start and end
 * do, as notices. The stream ends when `handleMessage` settles: the outcome
 * (with the turn's usage) or the error.
 */
export type MessageEvent =
  | { type: "turn.start"; agentId: string; sessionKey: string }
  | { type: "text.delta"; text: string }
  | { type: "tool.start"; id: string; name: string }
  | { type: "tool.end"; id: string; name: string; isError: boolean; text?: string }
  | ({ type: "delivery" } & Delivery)
  | { type: "notice"; event: string; data: Readonly<Record<string, unknown>> };

/** Called inside the turn, in order: it must return at once and never throw. */
export type MessageObserver = (event: MessageEvent) => void;

/** One message being watched, while it holds its session. */
export interface MessageWatch {
  /** Something the message delivered (its own `deliver`). */
  delivered(delivery: Delivery): void;
  /** Stops watching; nothing reaches the observer after this. */
  close(): void;
}

interface Watching {
  observer: MessageObserver;
  /** The turn this message runs, once it started (a command runs none). */
  turnId: string | undefined;
  closed: boolean;
}

/**
 * The messages watched now, by session key. A message is watched while it
 * holds its session's lock (its turn, or a locked command), so at most one
 * is watched per session and every event of the session meanwhile is
 * its own: events of its turn are told apart by turn id besides, and a
 * sub-turn's (under a child key) never match. A command that does not wait
 * for the lock (`/stop`) is watched for its own deliveries only.
 */
export class MessageWatches {
  private readonly bySession = new Map<string, Watching>();

  constructor(events: EventBus) {
    events.on("turn.start", (e) => {
      const watching = this.bySession.get(e.sessionKey);
      if (!watching || watching.turnId !== undefined) return;
      watching.turnId = e.turnId;
      watching.observer({ type: "turn.start", agentId: e.agentId, sessionKey: e.sessionKey });
    });
    events.on("text.delta", (e) => this.ofTurn(e)?.observer({ type: "text.delta", text: e.text }));
    events.on("tool.start", (e) => this.ofTurn(e)?.observer({ type: "tool.start", id: e.callId, name: e.tool }));
    events.on("tool.end", (e) =>
      this.ofTurn(e)?.observer({ type: "tool.end", id: e.callId, name: e.tool, isError: e.isError, ...(e.text === undefined ? {} : { text: e.text }) }),
    );
  }

  /**
   * Watches a message on `sessionKey`; `holdsSession` says whether it holds
   * the session's lock (a turn, a locked command), and so may take the
   * session's events as its own.
   */
  open(sessionKey: string, observer: MessageObserver, holdsSession: boolean): MessageWatch {
    const watching: Watching = { observer, turnId: undefined, closed: false };
    if (holdsSession) this.bySession.set(sessionKey, watching);
    return {
      delivered: (delivery) => {
        if (!watching.closed) observer({ type: "delivery", ...delivery });
      },
      close: () => {
        watching.closed = true;
        if (this.bySession.get(sessionKey) === watching) this.bySession.delete(sessionKey);
      },
    };
  }

  /** A notice to the session's open streams (`FeatureHost.notify`): the watched message's too. */
  notice(sessionKey: string, event: string, data: Readonly<Record<string, unknown>>): void {
    this.bySession.get(sessionKey)?.observer({ type: "notice", event, data });
  }

  /** Messages watched now (for tests and metrics). */
  get size(): number {
    return this.bySession.size;
  }

  private ofTurn(e: { sessionKey: string; turnId: string }): Watching | undefined {
    const watching = this.bySession.get(e.sessionKey);
    return watching && watching.turnId === e.turnId ? watching : undefined;
  }
}
