import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Readable } from "node:stream";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "./config.js";
import { limitedFetch } from "./http-fetch.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./message-size.js";
import { BoundedReadBuffer } from "./stdio-buffer.js";

/**
 * The SDK's client calls `close()` on a failed start without waiting for it;
 * a second caller must wait for that same close (which ends the child
 * process), not return at once. So every close after the first shares it.
 * Its read buffer is ours: a message over the limit fails its own request
 * instead of the connection (see message-size.ts).
 */
class StdioTransport extends StdioClientTransport {
  private closing: Promise<void> | undefined;
  /** How the child ended (code or signal), once it has. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  override start(): Promise<void> {
    const started = super.start();
    // The SDK spawns the child synchronously inside start(); its exit says how the server went away.
    const child = (this as unknown as { _process?: { once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void } })
      ._process;
    child?.once("exit", (code, signal) => {
      this.exit = { code, signal };
    });
    return started;
  }

  constructor(params: ConstructorParameters<typeof StdioClientTransport>[0], buffer: BoundedReadBuffer) {
    super(params);
    const inside = this as unknown as { _readBuffer?: unknown };
    if (!("_readBuffer" in inside)) throw new Error("the MCP SDK's stdio transport has no _readBuffer any more; update src/features/mcp/transport.ts");
    inside._readBuffer = buffer;
  }

  override close(): Promise<void> {
    this.closing ??= super.close();
    return this.closing;
  }
}

class HttpTransport extends StreamableHTTPClientTransport {
  private closing: Promise<void> | undefined;

  override close(): Promise<void> {
    this.closing ??= super.close();
    return this.closing;
  }
}

export interface OpenedTransport {
  transport: Transport;
  kind: "stdio" | "http";
  /** The child's stderr (stdio only), readable before the process starts. */
  stderr: Readable | null;
  /** How the child ended, once it has (stdio only). */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

/** How a server's process ended, in words: `it exited with code 3`, `it was killed by SIGKILL`. */
export function exitWords(exit: { code: number | null; signal: NodeJS.Signals | null } | undefined): string {
  if (exit?.signal) return `it was killed by ${exit.signal}`;
  if (exit && exit.code !== null) return `it exited with code ${exit.code}`;
  return "it exited";
}

export interface TransportContext {
  /** Where a relative `cwd` resolves, and the default working directory. */
  baseDir?: string;
  /** The gateway's environment, under the server's own `env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The most one message from the server may hold (tools.mcp.max_message_bytes). */
  maxMessageBytes?: number;
  /** Hears of a message over the limit that answered no request (it was skipped). */
  dropped?: (bytes: number) => void;
}

/** A new, unstarted transport for one server (a fresh one for each start). */
export function openTransport(config: McpServerConfig, ctx: TransportContext): OpenedTransport {
  const maxBytes = ctx.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const dropped = ctx.dropped ?? (() => {});
  if (config.url !== undefined) {
    const transport = new HttpTransport(new URL(config.url), {
      fetch: limitedFetch(maxBytes, dropped),
      ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
    });
    return { transport, kind: "http", stderr: null, exit: () => undefined };
  }
  if (config.command === undefined) throw new TypeError('an MCP server needs "command" or "url"');
  const cwd = ctx.baseDir !== undefined ? resolve(ctx.baseDir, config.cwd ?? ".") : config.cwd;
  // Spawning in a missing folder fails as "spawn <command> ENOENT", which blames the command.
  if (cwd !== undefined && !existsSync(cwd)) throw new Error(`its cwd ${cwd} does not exist`);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(ctx.env ?? {})) if (value !== undefined) env[key] = value;
  Object.assign(env, config.env);
  const transport = new StdioTransport(
    {
      command: config.command,
      args: config.args ?? [],
      env,
      ...(cwd !== undefined ? { cwd } : {}),
      stderr: "pipe",
    },
    new BoundedReadBuffer(maxBytes, dropped),
  );
  return { transport, kind: "stdio", stderr: transport.stderr as Readable | null, exit: () => transport.exit };
}
