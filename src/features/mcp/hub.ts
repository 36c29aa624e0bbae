import { setTimeout as sleep } from "node:timers/promises";
import type { McpServerConfig } from "./config.js";
import { messageOf } from "../../errors.js";
import { type Logger, silentLogger } from "../../log.js";
import { type Redact, noRedaction } from "../../tools/redact.js";
import type { AnyTool } from "../../tools/registry.js";
import { DEFAULT_TOOL_TIMEOUT_MS } from "../../tools/tool-set.js";
import { Backoff, type BackoffOptions } from "./backoff.js";
import { McpConnection, type ServerStatus } from "./connection.js";
import { checkInputSchema } from "../../tools/json-schema.js";
import type { Listing } from "./listing.js";
import { isUsableToolName, mcpToolName } from "./names.js";
import { McpTool } from "./tool.js";

export interface McpHubOptions {
  logger?: Logger;
  /** The config file's folder: a server's `cwd` resolves against it, and it is the default `cwd`. */
  baseDir?: string;
  /** The gateway's environment, given to every stdio server under its own `env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The most one message from a server may hold (tools.mcp.max_message_bytes; default 8 MiB). */
  maxMessageBytes?: number;
  /** Scrubs configured secrets from what servers write on stderr (kept for error messages and logged). */
  redact?: Redact;
  clock?: { now(): number };
  /** Waits between restarts; must end (resolve or reject) when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter for the restart backoff, in [0, 1). */
  random?: () => number;
  /** Restart backoff: waits grow from `initialMs` (500) to `maxMs` (30 000). */
  backoff?: Omit<BackoffOptions, "random">;
  /** How long a server may take to start and list its tools (default 30 s). */
  startTimeoutMs?: number;
  /**
   * The time limit the server is given for one call of `tool`, in ms (0: none).
   * Default: the tool's own `timeoutMs` (the server's `timeout_ms`, else 60 s).
   * Pass the policy's `timeoutMs` so `tools.<name>.timeout_ms` counts too.
   */
  callTimeoutMs?: (tool: AnyTool) => number;
  /** The config key that set that limit, named when a call runs out of time (default: the tool's own). */
  callTimeoutSetting?: (tool: AnyTool) => string;
}

export interface McpStartReport {
  /** Every tool of every server that started, sorted by name. */
  tools: AnyTool[];
  /** Servers that did not start, tools that were skipped: one line each. */
  warnings: string[];
}

/** What changed: a server came up, restarted or changed its tools. */
export interface McpToolsChange {
  server: string;
  /** New tools: add them to the registry (then refresh the policy). */
  added: AnyTool[];
  /** Tools the server no longer offers; they stay registered and answer an error. */
  removed: string[];
  /** Tools whose description or schema changed (or that are offered again). */
  changed: string[];
  /** Tools skipped in this listing (also logged). */
  warnings: string[];
}

export type McpServerStatus = ServerStatus & { tools: string[] };

const DEFAULT_START_TIMEOUT_MS = 30_000;

/**
 * Every configured MCP server, and its tools as `mcp_<server>_<tool>`.
 * `start()` connects them all at once; each server's tools are announced
 * through `onToolsChanged` as soon as it has listed them (a silent server
 * delays no other), and so is every later change. A server that fails is
 * a warning and is retried in the background, like one that crashes later.
 */
export class McpHub {
  private readonly connections: McpConnection[] = [];
  private readonly byName = new Map<string, McpTool>();
  private readonly listeners = new Set<(change: McpToolsChange) => void>();
  private readonly warned = new Set<string>();
  private readonly logger: Logger;
  private startedOnce = false;
  private closed = false;
  /** While `start()` runs, the first listings' warnings go to its report (not the log). */
  private starting = false;
  private readonly startWarnings: string[] = [];

  constructor(
    private readonly servers: Readonly<Record<string, McpServerConfig>>,
    private readonly opts: McpHubOptions = {},
  ) {
    this.logger = opts.logger ?? silentLogger;
    const backoff = opts.backoff ?? {};
    for (const [name, config] of Object.entries(servers)) {
      this.connections.push(
        new McpConnection(name, config, {
          logger: this.logger,
          transport: {
            ...(opts.baseDir !== undefined ? { baseDir: opts.baseDir } : {}),
            ...(opts.env ? { env: opts.env } : {}),
            ...(opts.maxMessageBytes !== undefined ? { maxMessageBytes: opts.maxMessageBytes } : {}),
          },
          clock: opts.clock ?? { now: () => Date.now() },
          sleep: opts.sleep ?? ((ms, signal) => sleep(ms, undefined, { signal })),
          backoff: new Backoff({ ...backoff, ...(opts.random ? { random: opts.random } : {}) }),
          startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
          stableMs: backoff.maxMs ?? 30_000,
          onListing: (listing) => this.listed(name, listing),
          redact: opts.redact ?? noRedaction,
        }),
      );
    }
  }

  /**
   * Starts every server in parallel; resolves when each is up or has failed
   * once, with the tools made so far and the warnings of that first round.
   * Listeners hear of each server's tools as it lists them, before then.
   */
  async start(): Promise<McpStartReport> {
    if (this.startedOnce) throw new Error("McpHub.start() was already called");
    this.startedOnce = true;
    this.starting = true;
    const failures = await Promise.all(this.connections.map((c) => c.start()));
    this.starting = false;
    const warnings = this.startWarnings.splice(0);
    this.connections.forEach((c, i) => {
      const reason = failures[i];
      // Closed while it started (the gateway stops): nothing is retried, and nothing to warn of.
      if (reason && !this.closed) warnings.push(`MCP server "${c.name}" did not start (${reason}); it is retried in the background`);
    });
    return { tools: this.tools(), warnings };
  }

  /** Every MCP tool made so far, sorted by name (including tools no longer offered). */
  tools(): AnyTool[] {
    return [...this.byName.keys()].sort().map((name) => this.byName.get(name)!);
  }

  /** The server a tool came from, or undefined when it is not an MCP tool. */
  origin(toolName: string): string | undefined {
    return this.byName.get(toolName)?.server;
  }

  /** Each server's state and the tools it offers now. */
  status(): Record<string, McpServerStatus> {
    const out: Record<string, McpServerStatus> = {};
    for (const c of this.connections) {
      const tools = [...this.byName.values()].filter((t) => t.server === c.name && t.offered).map((t) => t.name);
      out[c.name] = { ...c.status(), tools: tools.sort() };
    }
    return out;
  }

  /** Calls `listener` for every change from now on (a server's first listing too); returns the unsubscribe function. */
  onToolsChanged(listener: (change: McpToolsChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every server (and its process) and every pending restart. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await Promise.all(this.connections.map((c) => c.close()));
  }

  private listed(server: string, listing: Listing): void {
    const change = this.apply(server, listing);
    if (this.starting) this.startWarnings.push(...change.warnings);
    else for (const warning of change.warnings) this.logger.warn(warning);
    if (change.added.length + change.removed.length + change.changed.length === 0) return;
    this.logger.info(`MCP server "${server}" ${this.starting ? "is up" : "changed its tools"}`, {
      added: change.added.map((t) => t.name),
      removed: change.removed,
      changed: change.changed,
    });
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(`a listener of MCP tool changes failed: ${messageOf(error)}`);
      }
    }
  }

  /** Turns a server's listing into tools: new ones made, known ones updated, missing ones marked. */
  private apply(server: string, listing: Listing): McpToolsChange {
    const connection = this.connections.find((c) => c.name === server)!;
    const own = this.servers[server]?.timeout_ms;
    const timeout = { ms: own ?? DEFAULT_TOOL_TIMEOUT_MS, setting: own === undefined ? undefined : `tools.mcp.servers.${server}.timeout_ms` };
    const callTimeoutMs = this.opts.callTimeoutMs ?? ((tool: AnyTool) => tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
    const callTimeoutSetting = this.opts.callTimeoutSetting ?? ((tool: AnyTool) => tool.timeoutSetting ?? `tools.${tool.name}.timeout_ms`);
    const warnings = listing.problems.map((p) => `MCP server "${server}": ${p}; skipped it`);
    const change: McpToolsChange = { server, added: [], removed: [], changed: [], warnings };
    const seen = new Set<string>();
    const remotes = [...listing.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const remote of remotes) {
      const skip = (why: string) => warnings.push(`MCP server "${server}": tool "${remote.name}" skipped: ${why}`);
      const name = mcpToolName(server, remote.name);
      if (!isUsableToolName(name)) {
        skip(`its name would be "${name}", longer than 64 characters`);
        continue;
      }
      const existing = this.byName.get(name);
      const owner = existing && (existing.server !== server || existing.remoteName !== remote.name) ? existing : undefined;
      if (seen.has(name) || owner) {
        skip(`its name would be "${name}", like ${owner ? `tool "${owner.remoteName}" of MCP server "${owner.server}"` : "another of its tools"}`);
        continue;
      }
      const schema = checkInputSchema(remote.inputSchema);
      if (!schema.ok) {
        skip(schema.problem);
        continue;
      }
      seen.add(name);
      const description = remote.description?.trim() || `Tool "${remote.name}" of the MCP server "${server}".`;
      if (existing) {
        if (existing.update({ description, schema })) change.changed.push(name);
      } else {
        const tool = new McpTool(name, server, remote.name, { description, schema }, connection, timeout, {
          ms: callTimeoutMs,
          setting: callTimeoutSetting,
        });
        this.byName.set(name, tool);
        change.added.push(tool);
      }
    }
    for (const tool of this.byName.values()) {
      if (tool.server === server && tool.offered && !seen.has(tool.name)) {
        tool.offered = false;
        change.removed.push(tool.name);
      }
    }
    // A server that restarts lists the same odd tools again: say so once.
    change.warnings = warnings.filter((w) => !this.warned.has(w));
    for (const w of change.warnings) this.warned.add(w);
    return change;
  }
}
