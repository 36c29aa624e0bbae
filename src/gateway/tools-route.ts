import { Mutex } from "async-mutex";
import type { Hono } from "hono";
import { z } from "zod";
import { RequestError } from "../errors.js";
import type { ToolEntry } from "../runtime/options.js";
import type { Runtime } from "../runtime/runtime.js";
import { parseReporting, problemsLine } from "../validation.js";
import { readJson } from "./read-json.js";

/**
 * The web tool library (README, "The web tool library"): every tool the
 * gateway has, and a switch for each that writes the config file and
 * takes effect from the next turn.
 */

/** Where a switch is written: the config file the gateway loaded (the composition root's ConfigFile). */
export interface ToolSwitchFile {
  /** Writes `tools.<name>.enabled`; throws `config_not_written` (changing nothing) when it cannot. */
  setToolEnabled(name: string, enabled: boolean): Promise<{ file: string; written: boolean; created: boolean }>;
}

const stateBody = z.strictObject({ enabled: z.boolean() });

/** A tool as the route answers it. */
export function toolJson(entry: ToolEntry): Record<string, unknown> {
  return {
    name: entry.name,
    origin: entry.origin,
    enabled: entry.enabled,
    source: entry.source,
    ...(entry.envVar === undefined ? {} : { env_var: entry.envVar }),
    agents: entry.agents,
    approval: entry.approval,
    ...(Object.keys(entry.agentApprovals).length === 0 ? {} : { agent_approvals: entry.agentApprovals }),
  };
}

/**
 * `GET /v1/tools` and `PUT /v1/tools/<name>/state`. Switches run one at a
 * time: the file is written, then the runtime switched, before the next
 * one starts. Without `file` (an embedder's gateway with no config file to
 * write) a switch is refused, `409 config_not_written`.
 */
export function mountTools(app: Hono, runtime: Runtime, file: ToolSwitchFile | undefined): void {
  const switching = new Mutex();

  app.get("/v1/tools", (c) => c.json({ tools: runtime.toolLibrary().map(toolJson) }));

  app.put("/v1/tools/:name/state", async (c) => {
    const name = c.req.param("name");
    runtime.switchableTool(name);
    const body = parseReporting(stateBody, await readJson(c.req.raw));
    if (!body.success) throw new RequestError("invalid_request", problemsLine(body.error));
    const { enabled } = body.data;
    return switching.runExclusive(async () => {
      // Asked again inside the lock: nothing else changes a switch meanwhile, but the answer must be this moment's.
      runtime.switchableTool(name);
      if (!file) {
        throw new RequestError(
          "config_not_written",
          "this gateway has no config file to write (it was made without one); set tools.<name>.enabled in its config instead",
        );
      }
      const change = await file.setToolEnabled(name, enabled);
      const entry = runtime.setToolEnabled(name, enabled);
      return c.json({ tool: toolJson(entry), config_file: change.file, written: change.written });
    });
  });
}
