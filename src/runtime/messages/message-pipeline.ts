import type { AgentDefinition } from "../../agents/agent.js";
import { AbortedError, RequestError, messageOf } from "../../errors.js";
import type { DeliveryOrigin, EventBus } from "../../port/events.js";
import type { Delivery } from "../../port/feature.js";
import { CHAT_ID, parseSessionKey, rootKey, sessionKeyFor } from "../../session/key.js";
import { utf8Bytes } from "../../session/size.js";
import type { TurnQueue, Waiting } from "../../session/turn-queue.js";
import { joinSignals } from "../../signals.js";
import type { BackgroundTurns } from "./background-turns.js";
import type { CommandRegistry } from "./commands.js";
import type { ImageInput } from "../turn/images.js";
import type { MessageWatch, MessageWatches } from "../streams/message-stream.js";
import { type MessageInput, type MessageOutcome, STOPPED_REPLY } from "./message.js";
import type { SessionOutbox } from "../../session/outbox.js";
import type { HeldStop, StopBoard } from "../../session/stop-switches.js";
import type { TurnRunner } from "../turn/turn-runner.js";
import type { Work } from "../turn/work.js";

/** What the pipeline works with: the runtime's parts, shared with it. */
export interface PipelineParts {
  commands: CommandRegistry;
  turns: TurnRunner;
  events: EventBus;
  outbox: SessionOutbox;
  /** The per-session queue in front of the turn order: a user's turn waits there, bounded, and leaves it when its client goes away. */
  locks: TurnQueue;
  stops: StopBoard;
  background: BackgroundTurns;
  work: Work;
  /** Streamed answers' watchers. */
  watches: MessageWatches;
  /** Aborts when the runtime shuts down. */
  shutdown: AbortSignal;
  /** Whether the runtime has stopped taking messages. */
  closing: () => boolean;
  warn: (message: string) => void;
  /** The `ask_user` questions waiting in a (root) session: the user's next message answers the oldest. */
  questions: { answer(sessionKey: string, text: string, by: string): boolean };
}

/**
 * The way one message travels once its agent is known: a slash command is
 * answered at once (a locked one in its turn); anything else is a turn of
 * the agent. Turns on one session run one at a time in arrival order, under
 * one signal joining the client, the session's stop switch and shutdown;
 * what the message delivers goes to its caller, its watcher (a streamed
 * answer), the event bus and the session's event streams. Background turns
 * (a spawned child's result) take the same lock and deliver later.
 */
export class MessagePipeline {
  constructor(private readonly parts: PipelineParts) {}

  /** The session key of a chat, or a RequestError naming the bad chat id or channel. */
  keyFor(agentId: string, channel: string, chatId: string): string {
    if (!CHAT_ID.test(chatId)) {
      throw new RequestError("invalid_request", `session: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${JSON.stringify(chatId)})`);
    }
    const sessionKey = sessionKeyFor(agentId, channel, chatId);
    if (!parseSessionKey(sessionKey)) throw new RequestError("invalid_request", `channel: not a valid channel name: ${JSON.stringify(channel)}`);
    return sessionKey;
  }

  /** Refuses images the agent's model cannot take, and images sent with a slash command. */
  checkImages(agent: AgentDefinition, text: string, images: readonly ImageInput[]): void {
    if (images.length > 0) this.acceptImages(agent, this.parts.commands.match(text), images);
  }

  private acceptImages(agent: AgentDefinition, matched: ReturnType<CommandRegistry["match"]>, images: readonly ImageInput[]): void {
    if (matched) throw new RequestError("invalid_request", `images go with a message for the agent, not with a command (/${matched.command.name})`);
    this.parts.turns.acceptImages(agent, images);
  }

  /** A message on a session: a slash command, or a turn (`oneTurn`: of a session that lives for this message only). */
  async run(
    agent: AgentDefinition,
    sessionKey: string,
    input: Pick<MessageInput, "text" | "images" | "signal" | "onEvent" | "sampling" | "clientTools" | "toolResults" | "onQueued">,
    oneTurn = false,
  ): Promise<MessageOutcome> {
    const { commands, turns, events, outbox, stops } = this.parts;
    const matched = commands.match(input.text);
    const images = input.images ?? [];
    if (images.length > 0) this.acceptImages(agent, matched, images);
    // The user's next message after an ask_user question is its answer, not a turn (a turn holds the session meanwhile).
    // (A message with images is no answer: it waits its turn like any other.)
    if (
      !matched &&
      !oneTurn &&
      images.length === 0 &&
      !input.toolResults?.length &&
      this.parts.questions.answer(rootKey(sessionKey), input.text, parseSessionKey(sessionKey)?.channel ?? "api")
    ) {
      return { agentId: agent.id, sessionKey, reply: "", delivered: [], earlier: [], answered: true };
    }
    // What a command does on arrival (a clear: nothing asks a person until it is done) lasts until the message is done.
    const arrived = matched?.command.onArrival?.(sessionKey);
    const holds = !matched || matched.command.locked;
    const stop = holds ? stops.hold(rootKey(sessionKey)) : undefined;
    // One signal for the whole message: the client, the session's stop switch, shutdown.
    const joined = joinSignals([this.parts.shutdown, stop?.signal, input.signal]);
    const signal = joined.signal;
    const delivered: Delivery[] = [];
    let watch: MessageWatch | undefined;
    const deliver = (delivery: Delivery, origin?: DeliveryOrigin) => {
      delivered.push(delivery);
      watch?.delivered(delivery);
      events.emit("delivery", { agentId: agent.id, sessionKey, ...delivery, ...origin });
      outbox.publish(sessionKey, { type: "delivery", ...delivery });
    };

    const work = async (): Promise<Omit<MessageOutcome, "agentId" | "sessionKey" | "delivered">> => {
      // Watched while it holds the session: the session's events meanwhile are its own.
      if (input.onEvent) watch = this.parts.watches.open(sessionKey, input.onEvent, holds);
      try {
        signal.throwIfAborted();
        let answer: Pick<MessageOutcome, "reply" | "usage" | "truncated" | "clientCalls">;
        if (matched) {
          answer = { reply: await matched.command.run({ agentId: agent.id, sessionKey, args: matched.args, signal }) };
          deliver({ from: "command", text: answer.reply });
        } else {
          const more = {
            ...(input.sampling ? { sampling: input.sampling } : {}),
            ...(input.clientTools ? { clientTools: input.clientTools } : {}),
            ...(input.toolResults ? { toolResults: input.toolResults } : {}),
            ...(input.onEvent ? { watched: true } : {}),
          };
          const result = await turns.run(agent, sessionKey, input.text, signal, deliver, images, oneTurn, more);
          answer = {
            reply: result.reply,
            ...(result.usage ? { usage: result.usage } : {}),
            ...(result.hitLimit || result.cutOff ? { truncated: true } : {}),
            ...(result.clientCalls ? { clientCalls: result.clientCalls } : {}),
          };
        }
        // Taken while the message still holds the session: after /clear (which dropped them) there are none.
        return { ...answer, earlier: await this.earlier(sessionKey) };
      } finally {
        watch?.close();
      }
    };
    try {
      // A turn waits its session's turn bounded (count and bytes), and leaves the queue unrun, letting go of its input,
      // once the client (or /stop, or shutdown) ends it. A full queue refuses it at once (429): what it holds is let go too.
      const task = stop
        ? this.inTurn(sessionKey, work, {
            bounded: true,
            bytes: inputBytes(input.text, images, input.toolResults),
            signal,
            ...(input.onQueued ? { onWaiting: input.onQueued } : {}),
          })
        : work();
      this.parts.work.track(task);
      return { agentId: agent.id, sessionKey, delivered, ...(await task) };
    } catch (error) {
      // Ended by /stop: an answer, not a failure (clients retry failures, and would run it again).
      // Shutdown and a client that left abort with their own reasons and stay errors.
      if (!stop?.signal.aborted || signal.reason !== stop.signal.reason) throw error;
      delivered.push({ from: "command", text: STOPPED_REPLY });
      return { agentId: agent.id, sessionKey, reply: STOPPED_REPLY, delivered, earlier: await this.earlier(sessionKey), stopped: true };
    } finally {
      stop?.release();
      joined.dispose();
      if (typeof arrived === "function") arrived();
    }
  }

  /**
   * Deliveries kept for the session, handed out with an answer. The answer's
   * turn is kept already: when the outbox cannot be read, the answer goes
   * without them (they stay kept, for the next one) rather than fail, which
   * a client would take for a turn to send again.
   */
  private async earlier(sessionKey: string): Promise<Delivery[]> {
    try {
      return await this.parts.outbox.drain(sessionKey);
    } catch (error) {
      this.parts.warn(`the deliveries kept for ${sessionKey} could not be read; they wait for the next answer: ${messageOf(error)}`);
      return [];
    }
  }

  /** `work` once the session's turns before it ended, counted as queued meanwhile (until it runs, or leaves the queue). */
  private inTurn<T>(sessionKey: string, work: () => Promise<T>, waiting?: Waiting): Promise<T> {
    const started = this.parts.work.queue();
    let queued: Promise<T>;
    try {
      queued = this.parts.locks.run(
        sessionKey,
        () => {
          started();
          return work();
        },
        waiting,
      );
    } catch (error) {
      // Refused (the session's queue is full): it never waited.
      started();
      throw error;
    }
    return queued.finally(started);
  }

  /** The session's stop switch joined with shutdown; held until released. */
  holdStop(sessionKey: string): HeldStop {
    const held = this.parts.stops.hold(rootKey(sessionKey));
    const joined = joinSignals([held.signal, this.parts.shutdown]);
    return {
      signal: joined.signal,
      release: () => {
        held.release();
        joined.dispose();
      },
    };
  }

  /** A delivery outside any request: to the event bus, and kept for the session until a stream takes it. */
  deliverLater(agentId: string, sessionKey: string, delivery: Delivery, origin?: DeliveryOrigin): void {
    this.parts.events.emit("delivery", { agentId, sessionKey, ...delivery, ...origin });
    this.parts.outbox.publish(sessionKey, { type: "delivery", ...delivery }, true);
  }

  /** A turn nobody waits on (a spawned child's result): stopped by /stop and shutdown, dropped by a clear, delivered later. */
  backgroundTurn(agent: AgentDefinition, sessionKey: string, text: string): Promise<string> {
    if (this.parts.closing()) return Promise.reject(new AbortedError("the gateway is shutting down"));
    const stop = this.holdStop(sessionKey);
    // Stopped by /stop and shutdown; dropped by a clear of the session, even while it waits for the lock.
    const cleared = this.parts.background.add(sessionKey);
    const signals = joinSignals([stop.signal, cleared.signal]);
    const task = this.inTurn(sessionKey, async () => {
      signals.signal.throwIfAborted();
      const result = await this.parts.turns.run(agent, sessionKey, text, signals.signal, (delivery, origin) =>
        this.deliverLater(agent.id, sessionKey, delivery, origin),
      );
      return result.reply;
    }).finally(() => {
      cleared.done();
      signals.dispose();
      stop.release();
    });
    this.parts.work.track(task);
    return task;
  }
}

/** Bytes of input a waiting turn holds: its text, its images' URLs, the client's tool results. */
function inputBytes(text: string, images: readonly ImageInput[], toolResults: readonly { content: string }[] | undefined): number {
  let bytes = utf8Bytes(text);
  for (const image of images) bytes += image.url.length;
  for (const result of toolResults ?? []) bytes += utf8Bytes(result.content);
  return bytes;
}
