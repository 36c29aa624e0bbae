import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "./config.js";
import { abortReason, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import { type ToolResult, toolResult } from "../../tools/tool.js";
import type { Backoff } from "./backoff.js";
import { type Listing, listRemoteTools } from "./listing.js";
import { formatBytes } from "../../bytes.js";
import { tooLarge, tooLargeMessage } from "./message-size.js";
import { type McpCallAnswer, mcpResult } from "./result.js";
import { type TransportContext, exitWords, openTransport } from "./transport.js";

const CLIENT_INFO = { name: "picoclaw-ts", version: "0.1.0" };
/** The longest delay a timer takes; stands for "no limit". */
const NO_LIMIT_MS = 2_147_483_647;

export interface ConnectionOptions {
  logger: Logger;
  transport: TransportContext;
  clock: { now(): number };
  /** Waits `ms`, or less when `signal` aborts (it may then reject). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  backoff: Backoff;
  /** How long starting (initialize and the tool list) may take. */
  startTimeoutMs: number;
  /** After this long up, a crash restarts the backoff from its shortest wait. */
  stableMs: number;
  /** Every tool list the server gives: after each start and when it says its tools changed. */
  onListing(listing: Listing): void;
  /** Scrubs configured secrets from what the server writes on stderr, before it is kept, quoted or logged. */
  redact: (text: string) => string;
}

/** One started client: its process (stdio) or HTTP session, and what its stderr said last. */
interface Session {
  client: Client;
  kind: "stdio" | "http";
  /** How the process ended, once it has (stdio). */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  lastWords: string;
  /** The last stderr line that reads like an error (`Error: ...`, `ModuleNotFoundError: ...`). */
  errorLine?: string;
  /** When the server last wrote to stderr (clock ms): older words do not explain an exit. */
  lastAt?: number;
}

type State = { kind: "starting" } | { kind: "up"; session: Session; since: number } | { kind: "down"; reason: string } | { kind: "closed" };

export type ServerStatus = { state: "starting" | "up" | "closed" } | { state: "restarting"; reason: string };

/** An error's message, with its cause's when it has one (`fetch failed (connect ECONNREFUSED ...)`). */
function withCause(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? messageOf(error.cause) : "";
  return cause ? `${messageOf(error)} (${cause})` : messageOf(error);
}

const ERROR_LINE = /\b\w*(?:Error|Exception)\b:/;
/** Stderr lines older than this do not explain why a server went away. */
const RECENT_MS = 5_000;

/** A start that failed, with a reason a person can read (`it exited: <last stderr line>`). */
class StartFailure extends Error {}

/**
 * One MCP server for the whole life of the gateway: started once, restarted
 * with backoff whenever its process exits or its connection fails, closed
 * once. While it is down, calls answer an error result saying so.
 */
export class McpConnection {
  private state: State = { kind: "starting" };
  private readonly stop = new AbortController();
  private readonly work = new Set<Promise<unknown>>();
  private recovering = false;
  private relisting = false;
  private relistAgain = false;
  private closing: Promise<void> | undefined;

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly opts: ConnectionOptions,
  ) {}

  private get closed(): boolean {
    return this.state.kind === "closed";
  }

  status(): ServerStatus {
    return this.state.kind === "down" ? { state: "restarting", reason: this.state.reason } : { state: this.state.kind };
  }

  /** The first start. Resolves with why it failed (the server is then retried in the background), or undefined. */
  async start(): Promise<string | undefined> {
    try {
      await this.track(this.attempt());
      return undefined;
    } catch (error) {
      if (this.closed) return "the gateway is shutting down";
      const reason = messageOf(error);
      this.down(reason);
      return reason;
    }
  }

  /** Why calls cannot run now, for the model. */
  unavailable(): string {
    switch (this.state.kind) {
      case "down":
        return `MCP server "${this.name}" is restarting (${this.state.reason}); try again shortly`;
      case "closed":
        return `MCP server "${this.name}" is stopped (the gateway is shutting down)`;
      default:
        return `MCP server "${this.name}" is starting; try again shortly`;
    }
  }

  /** Calls tool `tool`; every failure but an abort of `signal` is an error result. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number, setting?: string): Promise<ToolResult> {
    const state = this.state;
    if (state.kind !== "up") return toolResult.error(this.unavailable());
    const timeout = timeoutMs > 0 ? timeoutMs : NO_LIMIT_MS;
    try {
      const answer = await state.session.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout });
      return mcpResult(this.name, tool, answer as McpCallAnswer);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      const server = `MCP server "${this.name}"`;
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        const now = this.state;
        if (now.kind === "down") return toolResult.error(`${server} stopped during the call (${now.reason}); try again shortly`);
        if (now.kind === "up") return toolResult.error(`${server} stopped during the call and is back; try again`);
        return toolResult.error(this.unavailable());
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return toolResult.error(`${server} did not answer "${tool}" within ${timeout} ms${setting ? ` (${setting})` : ""}`);
      }
      const big = error instanceof McpError ? tooLarge(error.data) : undefined;
      if (big) return toolResult.error(tooLargeMessage(this.name, tool, big.limit, big.bytes));
      if (error instanceof McpError) return toolResult.error(`${server} refused the call of "${tool}": ${messageOf(error)}`);
      if (state.session.kind === "http") {
        // No process tells us an HTTP server went away; a failed request does.
        this.lost(state.session, `the connection failed: ${withCause(error)}`);
        return toolResult.error(`${server} could not be reached (${withCause(error)}); it is being reconnected; try again shortly`);
      }
      return toolResult.error(`${server} failed to run "${tool}": ${messageOf(error)}`);
    }
  }

  /** Stops the server (ending its process) and every retry; idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      const state = this.state;
      this.state = { kind: "closed" };
      this.stop.abort(new Error(`MCP server "${this.name}" is closing`));
      this.closing = (async () => {
        if (state.kind === "up") await state.session.client.close().catch(() => {});
        await Promise.allSettled([...this.work]);
      })();
    }
    return this.closing;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    const forget = () => this.work.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** One start: a new process or session, `initialize`, the tool list. Throws a StartFailure. */
  private async attempt(): Promise<void> {
    let opened: ReturnType<typeof openTransport>;
    try {
      opened = openTransport(this.config, {
        ...this.opts.transport,
        dropped: (bytes) =>
          this.opts.logger.warn(
            `MCP server "${this.name}" sent a message of ${formatBytes(bytes)}, over tools.mcp.max_message_bytes, that answered no call; skipped it`,
          ),
      });
    } catch (error) {
      throw new StartFailure(`it could not be started: ${messageOf(error)}`, { cause: error });
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, kind: opened.kind, exit: opened.exit, lastWords: "" };
    if (opened.stderr) this.listen(opened.stderr, session);
    client.onclose = () => this.lost(session);
    client.onerror = (error) => {
      if (this.state.kind === "up" && this.state.session === session) {
        this.opts.logger.warn(`MCP server "${this.name}": ${messageOf(error)}`);
      }
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.track(this.relist(session));
    });
    const options: RequestOptions = { timeout: this.opts.startTimeoutMs, signal: this.stop.signal };
    try {
      await client.connect(opened.transport, options);
      const listing = await listRemoteTools(client, options);
      if (this.closed) throw new Error("the gateway is shutting down");
      this.state = { kind: "up", session, since: this.opts.clock.now() };
      this.opts.logger.info(`MCP server "${this.name}" is up with ${listing.tools.length} tool(s)`);
      this.opts.onListing(listing);
    } catch (error) {
      await client.close().catch(() => {});
      throw new StartFailure(this.failure(error, session), { cause: error });
    }
  }

  /** What the server said just before going away, if anything (older words are about something else). */
  private lastWords(session: Session): string {
    if (!session.lastWords || session.lastAt === undefined || this.opts.clock.now() - session.lastAt > RECENT_MS) return "";
    return `: ${session.lastWords}`;
  }

  private failure(error: unknown, session: Session): string {
    const said = this.lastWords(session);
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return session.kind === "stdio" ? `${exitWords(session.exit())}${said}` : "its connection closed";
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `it did not answer within ${this.opts.startTimeoutMs} ms${said}`;
    }
    if (session.kind === "http") return `it could not be reached: ${withCause(error)}`;
    if (typeof (error as { code?: unknown }).code === "string") return `it could not be started: ${messageOf(error)}`;
    return `${messageOf(error)}${said}`;
  }

  /** Logs the child's stderr line by line and keeps, for error messages, the line that says what went wrong (else the last). */
  private listen(stderr: Readable, session: Session): void {
    let pending = "";
    const say = (line: string) => {
      const text = this.opts.redact(line.trim());
      if (!text) return;
      const short = text.length > 200 ? `${text.slice(0, 199)}…` : text;
      // The line that says what went wrong beats the last one (Node ends a crash with its version banner).
      const now = this.opts.clock.now();
      if (session.lastAt === undefined || now - session.lastAt > RECENT_MS) session.errorLine = undefined;
      if (ERROR_LINE.test(text)) session.errorLine = short;
      session.lastWords = session.errorLine ?? short;
      session.lastAt = now;
      this.opts.logger.info(`MCP server "${this.name}" says: ${text}`);
    };
    stderr.setEncoding("utf8");
    stderr.on("data", (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
        say(pending.slice(0, end));
        pending = pending.slice(end + 1);
      }
      if (pending.length > 4096) {
        say(pending);
        pending = "";
      }
    });
    stderr.on("end", () => say(pending));
  }

  /** The server went away while up: mark it down and start the restarts. */
  private lost(session: Session, why?: string): void {
    if (this.state.kind !== "up" || this.state.session !== session) return;
    const said = this.lastWords(session);
    const reason = why ?? (session.kind === "stdio" ? `${exitWords(session.exit())}${said}` : "its connection closed");
    if (this.opts.clock.now() - this.state.since >= this.opts.stableMs) this.opts.backoff.reset();
    this.down(reason);
    void session.client.close().catch(() => {});
  }

  private down(reason: string): void {
    this.state = { kind: "down", reason };
    if (!this.recovering) void this.track(this.recover());
  }

  private async recover(): Promise<void> {
    this.recovering = true;
    try {
      await this.retryUntilUp();
    } finally {
      this.recovering = false;
    }
  }

  private async retryUntilUp(): Promise<void> {
    while (this.state.kind === "down") {
      const delay = this.opts.backoff.next();
      this.opts.logger.warn(`MCP server "${this.name}" is down (${this.state.reason}); restarting in ${delay} ms`);
      try {
        await this.opts.sleep(delay, this.stop.signal);
      } catch {
        return;
      }
      if (this.closed) return;
      try {
        await this.attempt();
        return;
      } catch (error) {
        if (this.closed) return;
        this.state = { kind: "down", reason: messageOf(error) };
      }
    }
  }

  /** The server said its tools changed: list them again (one listing at a time). */
  private async relist(session: Session): Promise<void> {
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = true;
    try {
      do {
        this.relistAgain = false;
        const listing = await listRemoteTools(session.client, { timeout: this.opts.startTimeoutMs, signal: this.stop.signal });
        if (this.state.kind !== "up" || this.state.session !== session) return;
        this.opts.onListing(listing);
      } while (this.relistAgain);
    } catch (error) {
      if (!this.closed) this.opts.logger.warn(`MCP server "${this.name}" said its tools changed, but listing them failed: ${messageOf(error)}`);
    } finally {
      this.relisting = false;
    }
  }
}
