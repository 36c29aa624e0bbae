import type { Config } from "../../config/schema.js";
import type { Logger } from "../../log.js";
import { type FeatureStateStore, MemoryFeatureState } from "../../session/feature-state.js";
import type { HistoryStore } from "../../session/history.js";
import { KeyQueue } from "../../session/key-queue.js";
import { MemoryHistoryStore } from "../../session/memory-history.js";
import { Outbox, type SessionOutbox } from "../../session/outbox.js";
import { type StopBoard, StopSwitches } from "../../session/stop-switches.js";
import type { SessionPorts } from "../../session/store.js";
import { historyLimits, stateLimits } from "../../session/limits.js";
import type { TurnOrder } from "../../session/turn-order.js";

/** Every session port the runtime works with. */
export interface Ports {
  history: HistoryStore;
  order: TurnOrder;
  stops: StopBoard;
  outbox: SessionOutbox;
  state: FeatureStateStore;
}

/** The ports a store brought, and the in-process one of each it did not: histories in memory (within the config's bounds), a queue per key, stop switches, the outbox (logging what it drops), feature state in memory. */
export function withInProcessPorts(given: Partial<SessionPorts>, config: Config, logger: Logger): Ports {
  return {
    history: given.history ?? new MemoryHistoryStore(historyLimits(config)),
    order: given.order ?? new KeyQueue(),
    stops: given.stops ?? new StopSwitches(),
    outbox:
      given.outbox ??
      new Outbox({
        dropped: (key, count) => logger.warn(`dropped ${count} undelivered message(s) of ${key}: nobody collected them`),
        overflowed: (key, items, bytes) =>
          logger.warn(`closed an event stream of ${key}: its client stopped reading (${items} item(s), ${bytes} bytes queued); its deliveries are kept`),
      }),
    state: given.state ?? new MemoryFeatureState(stateLimits(config)),
  };
}
