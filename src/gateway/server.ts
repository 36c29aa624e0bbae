import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError, PicoclawError } from "../errors.js";
import { failureOf } from "./errors.js";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import { MAX_BODY_BYTES, createApp } from "./app.js";
import { inTurn, limitConnections } from "./connections.js";
import { answerClientErrors } from "./http/client-errors.js";
import { continueOnRead } from "./http/expect-continue.js";
import { nodeListener } from "./http/node-listener.js";
import { ANSWER_QUEUE_BYTES } from "./sse.js";
import type { PageFiles } from "./page.js";
import type { ToolSwitchFile } from "./tools-route.js";
import type { GatewayAbout } from "./status-route.js";

/** What the node server allows its clients (README, "Security and limits"). */
export interface ServerLimits {
  /** Time a client has to send a request's headers; a connection that has not by then is closed. */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, headers and body (not the time the answer takes). */
  requestTimeoutMs: number;
  /** How long an idle connection stays open after an answer. */
  keepAliveTimeoutMs: number;
  /** Time an answer's bytes may wait for their client to take them; past it the connection is closed. */
  sendTimeoutMs: number;
  /** Open connections at most (see `limitConnections`). */
  maxConnections: number;
  /** Bytes a streamed answer holds that its client has not read; past it the stream is cut and its turn aborted. */
  streamQueueBytes: number;
  /** Session event streams open at once at most (below maxConnections: streams never take every connection). */
  maxStreams: number;
  /** Idempotency-Key answers kept at most, and their bytes together. */
  idempotencyKeys: number;
  idempotencyBytes: number;
  /** Stored responses (the Responses API) kept at most, and their bytes together. */
  responsesKept: number;
  responsesBytes: number;
}

/** The limits when none are given: the same as the config's defaults (a test holds them equal). */
export const DEFAULT_LIMITS: Readonly<ServerLimits> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  sendTimeoutMs: 30_000,
  maxConnections: 1_000,
  streamQueueBytes: ANSWER_QUEUE_BYTES,
  maxStreams: 500,
  idempotencyKeys: 1_000,
  idempotencyBytes: 16_777_216,
  responsesKept: 1_000,
  responsesBytes: 33_554_432,
};

export interface GatewayOptions {
  runtime: Runtime;
  host: string;
  port: number;
  token: string;
  /** Origins whose web pages may call the API (CORS); see `AppOptions`. */
  allowedOrigins?: readonly string[];
  /** Hosts answered while no token is set, besides loopback ones; see `AppOptions`. */
  allowedHosts?: readonly string[];
  /** Any limit not given is its default (`DEFAULT_LIMITS`). */
  limits?: Partial<ServerLimits>;
  /** How long running turns may take to finish on shutdown before they are aborted. */
  graceMs?: number;
  logger: Logger;
  /** The chat page served at `GET /` (the composition root reads it at start-up). */
  page?: PageFiles;
  /** Where the tool library's switches are written: the config file the gateway loaded. */
  configFile?: ToolSwitchFile;
  /** What `GET /v1/status` says of the process. */
  about?: GatewayAbout;
}

export interface RunningGateway {
  /** `http://HOST:PORT` with the real port. */
  url: string;
  port: number;
  /** Stops accepting, lets running turns finish (then aborts them), closes every connection. */
  close(): Promise<void>;
  /** Settles once what the first turn would make (its tools' specs, the model's answer reader) is made. */
  warmed: Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith("127.");
}

/** Starts the HTTP server on the runtime and resolves once it listens. */
export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const { runtime, host, token, logger } = opts;
  if (!isLoopback(host) && token === "") {
    logger.warn(
      `WARNING: binding to ${host} with NO token: anyone who can reach this address can use your agents and your model keys. ` +
        "Set gateway.token (or PICOCLAW_GATEWAY_TOKEN), or bind to 127.0.0.1.",
    );
  }
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError([`the headers timeout (${limits.headersTimeoutMs} ms) must not be more than the request timeout (${limits.requestTimeoutMs} ms)`]);
  }
  const app = createApp(runtime, {
    token,
    logger,
    allowedOrigins: opts.allowedOrigins,
    allowedHosts: opts.allowedHosts,
    streamQueueBytes: limits.streamQueueBytes,
    idempotency: { maxKeys: limits.idempotencyKeys, maxBytes: limits.idempotencyBytes },
    responses: { maxResponses: limits.responsesKept, maxBytes: limits.responsesBytes },
    // Streams never fill every connection: at most the config's, and always some room left below the connection cap.
    maxStreams: Math.max(1, Math.min(limits.maxStreams, limits.maxConnections - Math.ceil(limits.maxConnections / 10))),
    ...(opts.page ? { page: opts.page } : {}),
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
    ...(opts.about ? { about: opts.about } : {}),
  });
  // Node's server on the app, with each pipelined request run only once its answer can be written.
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node looks for connections past their headers or request time this often (30 s unless told).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
    },
    inTurn(
      // hono's types name the standard's classes; the listener's are ours, which hono is built to use (http/headers.ts).
      nodeListener((request, env) => app.fetch(request as unknown as globalThis.Request, env), {
        hostname: host,
        onError: (error) => failureOf(error, "answering a request", logger),
      }),
      MAX_BODY_BYTES,
    ),
  );
  // A client that shuts its sending side once the request is sent (half-close) still reads: its answer is sent,
  // not its turn aborted. Node's own switch for it (without it, the end of the request's stream counts as the
  // client gone). A client that goes away entirely still aborts its turn, when the connection closes.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  limitConnections(server, limits.maxConnections, logger, limits.sendTimeoutMs);
  answerClientErrors(server);
  continueOnRead(server);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "the port is in use" : error.code === "EACCES" ? "permission denied" : error.message;
      reject(new PicoclawError(`cannot listen on ${host}:${opts.port}: ${why}`, { code: "listen_failed", fault: "config" }));
    };
    server.once("error", onError);
    server.listen(opts.port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  // What the first turn would make (its tools' specs, the model's answer reader), made now in the background: the gateway
  // answers meanwhile, and the first turn after start does not make them itself. (prom-client is left to the first
  // scrape: a gateway nobody scrapes never loads it.)
  const warmed = new Promise<void>((resolve) => setImmediate(() => void runtime.warm().then(resolve, resolve)));
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await runtime.close(opts.graceMs ?? 5000);
      // Let the last responses be written, closing connections as they fall idle; then cut the rest.
      const sweep = setInterval(() => server.closeIdleConnections(), 25);
      const cut = setTimeout(() => server.closeAllConnections(), 2000);
      await stopped;
      clearInterval(sweep);
      clearTimeout(cut);
    })());

  return { url: `http://${shownHost}:${port}`, port, close, warmed };
}
