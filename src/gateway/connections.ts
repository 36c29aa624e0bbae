import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../log.js";

/**
 * Requests a connection may have pipelined behind the one being answered (HTTP/1.1 answers them in order); one more
 * closes the connection. No client pipelines this deep (browsers do not pipeline at all).
 */
export const MAX_PIPELINED = 16;

/**
 * `listener`, handed a pipelined request only once its answer can be written (Node gives it the connection's socket
 * when the answers before it are done). Node stops reading a connection whose queued answers pass its buffer's size,
 * but only when the next request is parsed: every request of one read (64 KiB: a thousand small GETs) was parsed at
 * once and run, and the answers, made later (every route awaits), were all held in memory (a thousand 4 MiB history
 * pages for a client that does not read: the heap ran out). A connection now holds one answer at a time, as a client
 * that does not pipeline does; one closed first never runs the requests queued on it. The bodies of queued requests
 * are read meanwhile (a request must be whole within request_timeout_ms, and an unread body stops the connection's
 * reading), at most `maxBodyBytes` for all the requests queued on a connection together (past it the connection is
 * closed, as a body over the limit closes it), and each is handed to the app with its request (`rawBody`).
 */
export function inTurn(listener: RequestListener, maxBodyBytes: number): RequestListener {
  /** Bytes of queued requests' bodies each connection holds. */
  const held = new WeakMap<Socket, { bytes: number }>();
  return (request, response) => {
    if (response.socket) return void listener(request, response);
    const socket = request.socket;
    let connection = held.get(socket);
    if (connection === undefined) held.set(socket, (connection = { bytes: 0 }));
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      connection.bytes += chunk.length;
      if (connection.bytes > maxBodyBytes) socket.destroy();
      else chunks.push(chunk);
    });
    let read = false;
    let placed = false;
    const run = () => {
      if (!read || !placed) return;
      connection.bytes -= bytes;
      (request as IncomingMessage & { rawBody?: Buffer }).rawBody = Buffer.concat(chunks);
      void listener(request, response);
    };
    request.once("end", () => {
      read = true;
      run();
    });
    response.once("socket", () => {
      placed = true;
      run();
    });
  };
}

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
      // of it): the node listener never hears of it, so never cancels its body nor aborts its request, and an event stream
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
      if (behind.size >= MAX_PIPELINED && !socket.destroyed) {
        logger.warn(`a client pipelined more than ${MAX_PIPELINED} requests on one connection: closing it`);
        socket.destroy();
      }
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
