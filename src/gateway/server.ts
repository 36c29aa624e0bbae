import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { PicoclawError } from "../errors.js";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import { createApp } from "./app.js";

export interface GatewayOptions {
  runtime: Runtime;
  host: string;
  port: number;
  token: string;
  /** Origins whose web pages may call the API (CORS); see `AppOptions`. */
  allowedOrigins?: readonly string[];
  /** Hosts answered while no token is set, besides loopback ones; see `AppOptions`. */
  allowedHosts?: readonly string[];
  /** How long running turns may take to finish on shutdown before they are aborted. */
  graceMs?: number;
  logger: Logger;
}

export interface RunningGateway {
  /** `http://HOST:PORT` with the real port. */
  url: string;
  port: number;
  /** Stops accepting, lets running turns finish (then aborts them), closes every connection. */
  close(): Promise<void>;
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
  const app = createApp(runtime, { token, logger, allowedOrigins: opts.allowedOrigins, allowedHosts: opts.allowedHosts });
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;
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

  return { url: `http://${shownHost}:${port}`, port, close };
}
