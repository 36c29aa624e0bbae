import { messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import { type HeldStop, type StopBoard, StopSwitches } from "../stop-switches.js";
import type { PgDatabase } from "./database.js";

/** The channel a /stop goes out on to every gateway, and the one each answers on. */
export const STOP_CHANNEL = "picoclaw_stop";
export const STOPPED_CHANNEL = "picoclaw_stopped";

/** The `application_name` of every gateway's LISTEN connection starts with this, then the gateway's id. */
export const LISTENER_NAME = "picoclaw-listen:";

/** How long a /stop waits for the other gateways to say whether they stopped something, at most. */
export const STOP_ANSWER_MS = 2_000;

export interface FleetStopParts {
  db: Pick<PgDatabase, "query">;
  /** This gateway's id (its LISTEN connection is named after it). */
  gateway: string;
  /** Whether this gateway's LISTEN connection is up (else no answer can reach it). */
  listening: () => boolean;
  ids: () => string;
  timer: Timer;
  logger: Logger;
  answerMs?: number;
}

interface Asked {
  answered: number;
  /** Gateways asked (known once the NOTIFY went out). */
  asked: number | undefined;
  done: (stopped: boolean) => void;
}

const stopRequest = (value: unknown): { g: string; r: string; k: string } | undefined => {
  const v = value as { g?: unknown; r?: unknown; k?: unknown } | null;
  return v && typeof v.g === "string" && typeof v.r === "string" && typeof v.k === "string" ? { g: v.g, r: v.r, k: v.k } : undefined;
};

const parse = (payload: string): unknown => {
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
};

/**
 * The stop switches of a fleet: each gateway holds the switches of the work
 * it runs (StopSwitches), and `stop` reaches them all. The gateway that gets
 * `/stop` flips its own switch at once, then NOTIFYs the others
 * (`picoclaw_stop`, a small payload: the session key and a request id);
 * each flips its own and answers whether it stopped anything
 * (`picoclaw_stopped`). `stop` resolves with whether any did: at once when
 * this gateway did, else when one says it did, when every gateway listening
 * has answered, or after STOP_ANSWER_MS. A /stop where nothing runs does
 * nothing anywhere; with the database down it still stops what runs here.
 */
export class PgStopBoard implements StopBoard {
  private readonly local = new StopSwitches();
  private readonly asked = new Map<string, Asked>();

  constructor(private readonly parts: FleetStopParts) {}

  hold(sessionKey: string): HeldStop {
    return this.local.hold(sessionKey);
  }

  get size(): number {
    return this.local.size;
  }

  async stop(sessionKey: string, reason?: string): Promise<boolean> {
    const here = await this.local.stop(sessionKey, reason);
    const request = this.parts.ids();
    const waiting = here || !this.parts.listening() ? undefined : this.ask(request);
    let others: number;
    try {
      const rows = await this.parts.db.query<{ others: number }>(
        `sending /stop of ${sessionKey} to the other gateways`,
        `SELECT pg_notify($1, $2), (SELECT count(*)::int FROM pg_stat_activity
           WHERE datname = current_database() AND application_name LIKE $3 AND application_name <> $4) AS others`,
        [STOP_CHANNEL, JSON.stringify({ g: this.parts.gateway, r: request, k: sessionKey }), `${LISTENER_NAME}%`, LISTENER_NAME + this.parts.gateway],
      );
      others = rows[0]?.others ?? 0;
    } catch (error) {
      this.parts.logger.warn(`/stop of ${sessionKey} stopped only what runs on this gateway: ${messageOf(error)}`);
      this.asked.get(request)?.done(false);
      return here;
    }
    if (!waiting) return here;
    const entry = this.asked.get(request);
    if (entry) {
      entry.asked = others;
      if (entry.answered >= others) entry.done(false);
    }
    return waiting;
  }

  /** A /stop another gateway sent: this gateway's switch of the session is flipped, and the answer says whether anything held it. */
  received(payload: string): void {
    const request = stopRequest(parse(payload));
    if (!request || request.g === this.parts.gateway) return;
    void (async () => {
      const stopped = await this.local.stop(request.k);
      await this.parts.db
        .query(`answering /stop of ${request.k}`, "SELECT pg_notify($1, $2)", [
          STOPPED_CHANNEL,
          JSON.stringify({ g: request.g, r: request.r, s: stopped, by: this.parts.gateway }),
        ])
        .catch((error: unknown) =>
          this.parts.logger.warn(`could not tell gateway ${request.g} whether /stop of ${request.k} stopped anything: ${messageOf(error)}`),
        );
    })();
  }

  /** Another gateway's answer to a /stop this one sent. */
  answered(payload: string): void {
    const answer = parse(payload) as { g?: unknown; r?: unknown; s?: unknown } | undefined;
    if (!answer || answer.g !== this.parts.gateway || typeof answer.r !== "string") return;
    const entry = this.asked.get(answer.r);
    if (!entry) return;
    entry.answered++;
    if (answer.s === true) entry.done(true);
    else if (entry.asked !== undefined && entry.answered >= entry.asked) entry.done(false);
  }

  private ask(request: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let cancel = () => {};
      const entry: Asked = {
        answered: 0,
        asked: undefined,
        done: (stopped) => {
          if (!this.asked.delete(request)) return;
          cancel();
          resolve(stopped);
        },
      };
      this.asked.set(request, entry);
      cancel = this.parts.timer(this.parts.answerMs ?? STOP_ANSWER_MS, () => entry.done(false));
    });
  }
}
