import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../log.js";

/**
 * At most `max` open connections, without letting idle ones lock clients
 * out. A connection is busy while a request on it is being answered (from
 * its headers to the end of its answer: a turn, an event stream) and idle
 * otherwise: connected but silent, half-way through its headers, or kept
 * alive between requests. When a new connection would be one too many, the
 * connection idle the longest is closed to make room; only when every
 * connection is busy is the newcomer refused (closed at once). Idle
 * connections end anyway (headers and keep-alive timeouts); this keeps a
 * crowd of them from filling the gateway meanwhile. A busy connection whose
 * client sent its FIN (done sending, or gone: TCP cannot tell) keeps its
 * answer coming, but is the first to go when room is needed: before any
 * newcomer is refused, the half-closed connection busy the longest is
 * closed (its turn aborted), so clients that left cannot hold the gateway.
 *
 * An answer its client does not take (a large history page it never reads:
 * the socket holds what the kernel could not) would keep its connection
 * busy, and its bytes in memory, for good. Node's socket timeout, set to
 * `sendTimeoutMs`, holds off while a write makes progress: when it fires
 * on a connection with bytes still to send, the connection is closed; on an
 * idle one (no request: what Node's keep-alive timeout sets it for), too,
 * as Node would; on one that is only silent (a turn waiting for its model)
 * nothing happens. A busy connection with bytes its client has not taken
 * goes before a half-closed one when room is needed.
 */
export function limitConnections(server: Server, max: number, logger: Logger, sendTimeoutMs = 30_000): void {
  /** Open connections and their requests in progress, longest idle first (a Map keeps insertion order). */
  const open = new Map<Socket, { busy: number; halfClosed: boolean }>();
  let refusing = false;
  const idleNow = (socket: Socket, state: { busy: number; halfClosed: boolean }) => {
    // Moves it to the end: the most recently idle.
    open.delete(socket);
    if (!socket.destroyed) open.set(socket, state);
  };

  // The one slot over `max` is where a newcomer waits while an idle connection is closed for it.
  server.maxConnections = max + 1;
  /** Per connection, the answers of pipelined requests queued behind the one being written (Node gives them no socket yet). */
  const queued = new WeakMap<Socket, Set<ServerResponse>>();
  server.on("connection", (socket: Socket) => {
    const state = { busy: 0, halfClosed: false };
    open.set(socket, state);
    const behind = new Set<ServerResponse>();
    queued.set(socket, behind);
    socket.once("close", () => {
      open.delete(socket);
      // Node closes only the answer being written when its connection goes (not one queued behind it, which never hears
      // of it): hono's node adapter never cancelled such an answer's body nor aborted its request, so an event stream
      // queued behind another stayed open for good (its stream slot taken, picoclaw_sse_streams_open up one). Closed
      // here as Node closes the other: destroyed, then "close".
      for (const response of behind) {
        response.destroy();
        response.emit("close");
      }
      behind.clear();
    });
    socket.once("end", () => (state.halfClosed = true));
    if (open.size <= max) {
      refusing = false;
      return;
    }
    // The idle one longest idle, else one whose answer waits for its client to take it, else the half-closed one
    // longest busy (its client may be gone).
    const room =
      [...open].find(([other, { busy }]) => other !== socket && busy === 0) ??
      [...open].find(([other]) => other !== socket && other.writableLength > 0) ??
      [...open].find(([other, { halfClosed }]) => other !== socket && halfClosed);
    if (room) {
      room[0].destroy();
      open.delete(room[0]);
      refusing = false;
      return;
    }
    open.delete(socket);
    socket.destroy();
    if (!refusing) logger.warn(`gateway.limits.max_connections (${max}) reached with every connection busy: refusing new connections`);
    refusing = true;
  });
  // With a listener here, Node leaves every timed-out socket to it (without one it closes each).
  server.setTimeout(sendTimeoutMs, (socket: Socket) => {
    const state = open.get(socket);
    if (state === undefined || state.busy === 0 || socket.writableLength > 0) socket.destroy();
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const behind = queued.get(socket);
    if (!response.socket && behind) {
      behind.add(response);
      // Its turn to be written: Node closes it from now on.
      response.once("socket", () => behind.delete(response));
    }
    const state = open.get(socket);
    if (state === undefined) return;
    state.busy += 1;
    response.once("close", () => {
      state.busy -= 1;
      if (state.busy === 0) idleNow(socket, state);
    });
  });
}
