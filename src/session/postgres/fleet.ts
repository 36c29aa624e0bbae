import { randomUUID } from "node:crypto";
import type { Logger } from "../../log.js";
import { type Timer, realTimer } from "../../signals.js";
import type { StoreConnection } from "../store.js";
import type { PgDatabase } from "./database.js";
import { OUTBOX_CHANNEL, OutboxRows, WATCH_CHANNEL } from "./outbox-rows.js";
import { PgListener } from "./pg-listener.js";
import { PgOutbox } from "./pg-outbox.js";
import { LISTENER_NAME, PgStopBoard, STOPPED_CHANNEL, STOP_CHANNEL } from "./pg-stops.js";

export interface FleetParts {
  logger: Logger;
  /** Times the LISTEN connection's retries, the outbox's and /stop's waits (default: real timers). */
  timer?: Timer;
  /** This gateway's id among the fleet (default: a random UUID); its LISTEN connection is named after it. */
  gateway?: string;
  /** Ids of /stop requests (default: random UUIDs). */
  ids?: () => string;
}

export interface FleetMember {
  readonly gateway: string;
  readonly outbox: PgOutbox;
  readonly stops: PgStopBoard;
  readonly listener: PgListener;
  /** The database's connection with the LISTEN connection: ready once both are, closed after the outbox wrote what waits. */
  readonly connection: StoreConnection;
}

/**
 * What one gateway shares with the others on the database besides
 * histories and state: its outbox (pg-outbox.ts) and its stop switches
 * (pg-stops.ts), both fed by its one LISTEN connection (pg-listener.ts).
 */
export function fleetMember(db: PgDatabase, parts: FleetParts): FleetMember {
  const timer = parts.timer ?? realTimer;
  const gateway = parts.gateway ?? randomUUID();
  const { logger } = parts;
  const outbox = new PgOutbox({ rows: new OutboxRows(db, gateway), gateway, logger, timer });
  const listening = { now: false };
  const stops = new PgStopBoard({ db, gateway, listening: () => listening.now, ids: parts.ids ?? randomUUID, timer, logger });
  const listener = new PgListener({
    channels: [OUTBOX_CHANNEL, WATCH_CHANNEL, STOP_CHANNEL, STOPPED_CHANNEL],
    connect: () => db.dedicatedClient("listening for other gateways' deliveries and stops", LISTENER_NAME + gateway),
    onNotification: (channel, payload) => {
      if (channel === OUTBOX_CHANNEL) outbox.notified(payload);
      else if (channel === WATCH_CHANNEL) outbox.watchNotified(payload);
      else if (channel === STOP_CHANNEL) stops.received(payload);
      else if (channel === STOPPED_CHANNEL) stops.answered(payload);
    },
    onConnected: (again) => {
      listening.now = true;
      outbox.listened(again);
    },
    onLost: () => {
      listening.now = false;
      outbox.lost();
    },
    logger,
    timer,
  });
  const connection: StoreConnection = {
    ready: async () => {
      await db.ready();
      await listener.start();
      await outbox.ready();
    },
    probe: () => db.probe(),
    close: async () => {
      try {
        await outbox.close();
        await listener.close();
      } finally {
        await db.close();
      }
    },
  };
  return { gateway, outbox, stops, listener, connection };
}
