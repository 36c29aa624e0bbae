import type { Feature, FeatureParts } from "../../port/feature.js";
import type { AnyTool } from "../../tools/registry.js";
import type { McpHub } from "./hub.js";

/**
 * MCP servers as a feature: the tools of the servers that started with the
 * gateway, the tools of servers that come up later (added as they arrive),
 * and the servers stopped when the runtime closes.
 */
export function mcpFeature(hub: McpHub, started: readonly AnyTool[], warnings: readonly string[] = []): Feature {
  return {
    name: "mcp",
    setup(host): FeatureParts {
      hub.onToolsChanged((change) => host.addTools(change.added, `mcp server ${change.server}`));
      return {
        tools: started,
        origin: (name) => `mcp server ${hub.origin(name) ?? "?"}`,
        warnings,
        close: () => hub.close(),
      };
    },
  };
}
