import type { IncomingMessage, Server, ServerResponse } from "node:http";

const CONTINUE = Symbol("sendContinue");
type Expecting = IncomingMessage & { [CONTINUE]?: () => void };

/**
 * `Expect: 100-continue`: the client sends its body only once the server
 * says `100 Continue`. Node says it as soon as the headers are in, before
 * any route has looked at them, so a client would send a body the gateway
 * then refuses unread. With this the gateway says it when a route first
 * reads the body: a request refused on its headers alone (a body over the
 * limit: 413; no token: 401; a type the route does not take: 415) gets its
 * answer without it, and Node closes the connection after that answer, as
 * the body may still come. A request queued behind another on its
 * connection (pipelined) gets it at once, as from Node: its body is read
 * ahead of its turn.
 */
export function continueOnRead(server: Server): void {
  server.on("checkContinue", (request: Expecting, response: ServerResponse) => {
    if (response.socket) {
      let sent = false;
      request[CONTINUE] = () => {
        if (sent || response.headersSent || response.writableEnded) return;
        sent = true;
        response.writeContinue();
      };
    } else response.writeContinue();
    server.emit("request", request, response);
  });
}

/** Says `100 Continue` to a client that waits for it, as its body is about to be read. */
export function continueBeforeReading(incoming: object): void {
  (incoming as Expecting)[CONTINUE]?.();
}
