import { type Timer, realTimer } from "../signals.js";
import type { NodeBindings } from "./http/node-listener.js";

/**
 * When, after the client's FIN, the gateway asks again whether it is still
 * there (ms): a client that closed its socket answers the first probe with
 * a reset, which the next one finds.
 */
export const PROBES_MS = [0, 50, 1_000, 5_000] as const;

/**
 * Tells a client that went away from one that only half-closed, while its
 * turn waits for the session's turn before it. The server keeps a
 * connection open after the client's FIN (a half-closed client still reads
 * its answer), so a client gone entirely would be noticed only when its
 * answer is written: its turn would wait, holding its body, and then run
 * for nobody. While it waits, once the FIN has come, the gateway sends
 * `100 Continue` (the interim answer every HTTP/1.1 client reads past,
 * Python's http.client included, which takes any other 1xx for the answer)
 * at PROBES_MS: a socket closed at the other end answers with a reset, the
 * next write fails, the connection closes and the request's signal aborts,
 * so the turn leaves its queue unrun. A half-closed client reads the
 * interims and then its answer. Returns the `onQueued` of the message, or
 * undefined off a node server (`app.request`).
 */
export function departureProbe(env: unknown, timer: Timer = realTimer): ((waiting: boolean) => void) | undefined {
  // The node request and answer a request came on (the node listener's `c.env`); neither off a node server.
  const { incoming, outgoing } = (env ?? {}) as Partial<NodeBindings>;
  if (!incoming?.socket || !outgoing || typeof outgoing.writeContinue !== "function") return undefined;
  const socket = incoming.socket;
  const res = outgoing;
  const cancels: (() => void)[] = [];
  const probe = () => {
    if (!res.headersSent && !res.writableEnded && !socket.destroyed) res.writeContinue();
  };
  const onEnd = () => {
    for (const ms of PROBES_MS) cancels.push(timer(ms, probe));
  };
  const stop = () => {
    socket.off("end", onEnd);
    for (const cancel of cancels.splice(0)) cancel();
  };
  return (waiting) => {
    stop();
    if (!waiting) return;
    if (socket.readableEnded) onEnd();
    else socket.once("end", onEnd);
  };
}
