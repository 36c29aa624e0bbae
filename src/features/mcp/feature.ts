import { AbortedError, ConfigError } from "../../errors.js";
import { type Feature, type Preloaded, defineFeature } from "../../port/feature.js";
import type { AnyTool } from "../../tools/registry.js";
import { type McpSection, mcpSecrets, mcpSection } from "./config.js";
import type { McpHub, McpStartReport } from "./hub.js";
import { mcpFromPicoclaw } from "./picoclaw.js";

/** What an MCP server process inherits from the gateway's environment; the rest it gets only through its own `env`. */
export const MCP_INHERITED_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"];

const SECTION = "tools.mcp";

/**
 * MCP servers as a feature (`tools.mcp`). Its preload (the composition
 * root's `prepare`) starts the configured servers: the tools of those that
 * started are its tools; a server that does not start is a warning, is
 * retried, and its tools are added as they arrive; the servers stop when
 * the runtime closes. The MCP client (with its SDK and ajv) is imported
 * only when the config lists a server. Set up without its preload
 * (`bootstrap`), it has no tools.
 */
export const mcpFeature: Feature = defineFeature({
  name: "mcp",
  needs: [],
  config: {
    sections: { [SECTION]: mcpSection },
    secrets: (own) => mcpSecrets(own.sections[SECTION]),
    fromPicoclaw: { [SECTION]: mcpFromPicoclaw },
  },
  async preload(ctx): Promise<Preloaded> {
    const section = ctx.config.sections[SECTION] as McpSection;
    if (Object.keys(section.servers).length === 0) return { feature: mcpFeature };
    const { McpHub } = await import("./index.js");
    const hub = new McpHub(section.servers, {
      logger: ctx.logger,
      redact: ctx.redact,
      baseDir: ctx.baseDir,
      env: Object.fromEntries(MCP_INHERITED_ENV.filter((k) => ctx.env[k] !== undefined).map((k) => [k, ctx.env[k]])),
      callTimeoutMs: (tool) => ctx.toolTimeoutMs(tool),
      callTimeoutSetting: (tool) => ctx.toolTimeoutSetting(tool),
      ...(section.max_message_bytes === undefined ? {} : { maxMessageBytes: section.max_message_bytes }),
    });
    const report = await startOrStop(hub, ctx.signal);
    const clashes = report.tools.filter((tool) => ctx.taken.has(tool.name));
    if (clashes.length > 0) {
      await hub.close();
      throw new ConfigError(
        clashes.map((tool) => `tools.mcp.servers.${hub.origin(tool.name)}: its tool "${tool.name}" clashes with another tool of that name`),
      );
    }
    return { feature: mcpServersFeature(hub, report.tools, report.warnings), tools: report.tools, abandon: () => hub.close() };
  },
  setup: () => ({}),
});

/** The feature of servers that were started: their tools now, the tools of servers that come up later as they arrive. */
export function mcpServersFeature(hub: McpHub, started: readonly AnyTool[], warnings: readonly string[]): Feature {
  return defineFeature({
    name: "mcp",
    needs: ["addTools"],
    setup(host) {
      hub.onToolsChanged((change) => host.addTools(change.added, `mcp server ${change.server}`));
      return {
        tools: started,
        origin: (name) => `mcp server ${hub.origin(name) ?? "?"}`,
        warnings,
        close: () => hub.close(),
      };
    },
  });
}

/** Starts the hub, unless `signal` says stop first: then every server is stopped and start-up ends. */
async function startOrStop(hub: McpHub, signal: AbortSignal | undefined): Promise<McpStartReport> {
  if (!signal) return hub.start();
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AbortedError("start-up was stopped"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([hub.start(), stopped]);
  } catch (error) {
    await hub.close();
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort!);
    stopped.catch(() => {});
  }
}
