import type { Feature, FeatureParts } from "../../port/feature.js";
import type { LoadedPlugin } from "./load.js";

/** The tools of the modules listed in `tools.plugins` (loaded and checked by `loadPlugins`), as a feature. */
export function pluginFeature(plugins: readonly LoadedPlugin[]): Feature {
  const origins = new Map(plugins.flatMap((plugin) => plugin.tools.map((tool) => [tool.name, `plugin ${plugin.spec}`] as const)));
  return {
    name: "plugins",
    setup: (): FeatureParts => ({ tools: plugins.flatMap((plugin) => plugin.tools), origin: (name) => origins.get(name) ?? "plugin" }),
  };
}
