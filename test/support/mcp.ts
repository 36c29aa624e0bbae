import { looseState } from "./tools.js";
import { fileURLToPath } from "node:url";
import type { McpServerConfig } from "../../src/features/mcp/config.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { McpHub, type McpHubOptions } from "../../src/features/mcp/index.js";
import { type RecordingLogger, recordingLogger } from "./project.js";
import { ManualClock } from "./timers.js";
import { within } from "./wait.js";

/** The real stdio MCP server of the tests (test/fixtures/mcp-server.mjs). */
export const FIXTURE_SERVER = fileURLToPath(new URL("../fixtures/mcp-server.mjs", import.meta.url));

export function fixtureServer(extra: Omit<Partial<McpServerConfig>, "url"> = {}): McpServerConfig {
  return { command: process.execPath, args: [FIXTURE_SERVER], ...extra };
}

/**
 * Restart waits the test ends by hand: `release()` ends every wait begun so
 * far; an abort (the hub closing) ends a wait at once.
 */
export class ManualSleep {
  readonly waits: number[] = [];
  private readonly pending: (() => void)[] = [];
  private onBegin: (() => void)[] = [];

  readonly sleep = (ms: number, signal: AbortSignal): Promise<void> => {
    this.waits.push(ms);
    for (const wake of this.onBegin.splice(0)) wake();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.pending.push(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  };

  release(): void {
    for (const wake of this.pending.splice(0)) wake();
  }

  /**
   * Resolves once `count` waits have begun in total, however long the server
   * takes to go down (up to a wait's deadline, then it fails saying how many began).
   */
  async began(count: number): Promise<void> {
    const begun = async () => {
      while (this.waits.length < count) await new Promise<void>((resolve) => this.onBegin.push(resolve));
    };
    await within(`${count} restart waits to begin`, begun(), { instead: () => `${this.waits.length} began` });
  }
}

export interface TestHub {
  hub: McpHub;
  logger: RecordingLogger;
  sleep: ManualSleep;
  clock: ManualClock;
}

/**
 * A hub over real server processes, with restarts the test releases by hand
 * and a clock that stands still (so what a server said is always "just
 * before" it exited, and no up-time is long enough to reset the backoff,
 * however slow the machine). Close it when done.
 */
export function testHub(servers: Record<string, McpServerConfig>, opts: McpHubOptions = {}): TestHub {
  const logger = recordingLogger();
  const sleep = new ManualSleep();
  const clock = new ManualClock();
  const hub = new McpHub(servers, { logger, sleep: sleep.sleep, clock, random: () => 0.5, startTimeoutMs: 20_000, ...opts });
  return { hub, logger, sleep, clock };
}

export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1", callId: "c1", signal, state: looseState(), publish: () => {} };
}

export const toolCall = (name: string, args: unknown = {}, id = "c1") => ({
  id,
  type: "function" as const,
  function: { name, arguments: JSON.stringify(args) },
});

/** Whether a process with this pid still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
