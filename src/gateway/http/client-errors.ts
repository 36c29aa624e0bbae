import type { Server } from "node:http";
import type { Socket } from "node:net";

/** What Node's parser refuses, as the gateway's JSON errors: status, reason phrase, code, message. */
function refusalOf(code: string | undefined): [number, string, string, string] {
  if (code === "HPE_HEADER_OVERFLOW") return [431, "Request Header Fields Too Large", "request_header_fields_too_large", "the request's headers are too large"];
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return [408, "Request Timeout", "request_timeout", "the request was not received in time"];
  return [400, "Bad Request", "invalid_request", `the request is not valid HTTP/1.1${code ? ` (${code})` : ""}`];
}

/**
 * Answers what Node's HTTP parser refuses before any route sees it (a request smuggling attempt with both
 * Content-Length and Transfer-Encoding, folded or malformed headers, too many headers, a request that took too
 * long) with a JSON error, as every other error here is, where Node would write an empty one. The connection is
 * closed after it. Nothing is written over an answer already begun on the connection, or to a client gone.
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket & { _httpMessage?: { headersSent?: boolean } }) => {
    if (error.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] = refusalOf(error.code);
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
