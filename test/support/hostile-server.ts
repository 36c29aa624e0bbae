import { type Server, type ServerResponse, createServer } from "node:http";
import { setTimeout as pause } from "node:timers/promises";
import { listenForTest } from "./listen.js";

/**
 * A real HTTP server on 127.0.0.1 that misbehaves the way a broken or
 * hostile model server can: it sends without end (data, keep-alives, an
 * error body of any size), as fast as the client reads, until the client
 * closes the connection. Each request's answer is written by `answer`; what
 * it wrote is counted, so a test can tell the client stopped reading.
 */

export interface Poured {
  /** Bytes written before the client went away (or the answer ended). */
  bytes: number;
  /** Whether the client closed the connection before the answer ended. */
  cut: boolean;
}

export interface HostileServer {
  /** `http://127.0.0.1:PORT/v1`, the api_base to configure. */
  url: string;
  /** One per request, settled when its answer is over (however it ended). */
  answers: Promise<Poured>[];
}

/**
 * Writes `next(i)` for i = 0, 1, 2... waiting whenever the socket is full,
 * until `next` returns undefined (the answer ends) or the client leaves.
 * `pauseMs` paces the writes (a server that trickles keep-alives).
 */
export async function pour(res: ServerResponse, next: (i: number) => string | Uint8Array | undefined, pauseMs = 0): Promise<Poured> {
  let bytes = 0;
  let gone = false;
  res.on("close", () => (gone = true));
  for (let i = 0; !gone; i++) {
    const chunk = next(i);
    if (chunk === undefined) {
      res.end();
      return { bytes, cut: false };
    }
    bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
    if (pauseMs > 0 && !gone) await pause(pauseMs);
  }
  return { bytes, cut: true };
}

/** Starts the server (closed when the test ends); `answer` writes each response. */
export async function hostileServer(answer: (res: ServerResponse, index: number) => Promise<Poured>): Promise<HostileServer> {
  const answers: Promise<Poured>[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answers.push(answer(res, answers.length)));
  });
  return { url: `${await listenForTest(server)}/v1`, answers };
}

/** Starts an SSE answer. */
export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}
