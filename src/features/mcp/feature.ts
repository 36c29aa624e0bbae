import { type Feature, type Preloaded, defineFeature } from "../../port/feature.js";
import type { Redact } from "../../tools/redact.js";
import { type McpSection, type McpServerConfig, mcpSecrets, mcpSection } from "./config.js";
import type { McpHub, McpHubOptions } from "./hub.js";
import { mcpToolName } from "./names.js";
import { mcpFromPicoclaw } from "./picoclaw.js";

/** What an MCP server process inherits from the gateway's environment; the rest it gets only through its own `env`. */
export const MCP_INHERITED_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"];

const SECTION = "tools.mcp";

/**
 * MCP servers as a feature (`tools.mcp`). Its preload (the composition
 * root's `prepare`) only gathers what the servers need: nothing is started
 * or imported then. The servers start when the runtime connects (the
 * gateway, once it listens; `picoclaw agent`, before its turn), all at
 * once, each server's tools added as soon as it has listed them; a server
 * that does not start is a warning and is retried. Commands that describe
 * the config (`config check`, `agents`) never connect. The MCP client
 * (with its SDK and ajv) is imported on connecting, when the config lists
 * a server. Set up without its preload (`bootstrap`), it has no tools.
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
    const options: McpHubOptions = {
      logger: ctx.logger,
      redact: ctx.redact,
      baseDir: ctx.baseDir,
      env: Object.fromEntries(MCP_INHERITED_ENV.filter((k) => ctx.env[k] !== undefined).map((k) => [k, ctx.env[k]])),
      callTimeoutMs: (tool) => ctx.toolTimeoutMs(tool),
      callTimeoutSetting: (tool) => ctx.toolTimeoutSetting(tool),
      ...(section.max_message_bytes === undefined ? {} : { maxMessageBytes: section.max_message_bytes }),
    };
    // The MCP client (and its SDK) is imported when the runtime connects, not before.
    return { feature: mcpServersFeature(section.servers, async () => new (await import("./index.js")).McpHub(section.servers, options)) };
  },
  setup: () => ({}),
});

/**
 * The feature of configured servers: no tools until it connects; then each
 * server's tools as it lists them, and later changes as they happen. The
 * hub (`makeHub`: with it the MCP client) is made on connecting, never before.
 */
export function mcpServersFeature(servers: Readonly<Record<string, McpServerConfig>>, makeHub: () => Promise<McpHub>): Feature {
  return defineFeature({
    name: "mcp",
    needs: ["addTools"],
    setup(host) {
      let hub: McpHub | undefined;
      let connecting: Promise<readonly string[]> | undefined;
      let closed = false;
      const connect = async (): Promise<readonly string[]> => {
        const made = await makeHub();
        if (closed) {
          await made.close();
          return [];
        }
        hub = made;
        hub.onToolsChanged((change) => host.addTools(change.added, `mcp server ${change.server}`));
        return (await hub.start()).warnings;
      };
      return {
        laterTools: Object.keys(servers).map((server) => mcpToolName(server, "")),
        connect: () => {
          connecting ??= connect();
          return connecting;
        },
        close: async () => {
          closed = true;
          await hub?.close();
        },
      };
    },
  });
}

/** How `picoclaw agents` shows a configured server without starting it: its name, what it runs or reaches, and its tools' names. */
export interface McpServerLine {
  name: string;
  /** The command and its arguments (stdio), or the URL (HTTP), scrubbed of the config's secrets. */
  runs: string;
  /** The names its tools will have: `mcp_<server>_*`. */
  tools: string;
}

/** The configured MCP servers as the config describes them (nothing is started, nothing imported). */
export function describeMcpServers(section: McpSection | undefined, redact: Redact): McpServerLine[] {
  return Object.entries(section?.servers ?? {}).map(([name, server]) => ({
    name,
    runs: redact(server.url ?? [server.command ?? "", ...(server.args ?? [])].join(" ")),
    tools: `${mcpToolName(name, "")}*`,
  }));
}
