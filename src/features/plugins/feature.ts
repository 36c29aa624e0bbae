import { type Feature, type Preloaded, defineFeature } from "../../port/feature.js";
import { pluginsSection } from "./config.js";
import type { LoadedPlugin } from "./load.js";

const SECTION = "tools.plugins";

/**
 * The tools of the modules listed in `tools.plugins`, as a feature. Its
 * preload (the composition root's `prepare`) imports and checks every
 * module (a broken one stops start-up); the loader is imported only when
 * the config lists a module. Set up without its preload (`bootstrap`), it
 * has no tools.
 */
export const pluginsFeature: Feature = defineFeature({
  name: "plugins",
  needs: [],
  config: { sections: { [SECTION]: pluginsSection } },
  async preload(ctx): Promise<Preloaded> {
    const specs = ctx.config.sections[SECTION] as string[];
    if (specs.length === 0) return { feature: pluginsFeature };
    const plugins = await (await import("./load.js")).loadPlugins(specs, ctx.baseDir, ctx.taken, ctx.reservedToolKeys);
    return { feature: loadedPlugins(plugins), tools: plugins.flatMap((plugin) => plugin.tools) };
  },
  setup: () => ({}),
});

/** The tools of loaded plugin modules, each from `plugin <spec>`. */
function loadedPlugins(plugins: readonly LoadedPlugin[]): Feature {
  const origins = new Map(plugins.flatMap((plugin) => plugin.tools.map((tool) => [tool.name, `plugin ${plugin.spec}`] as const)));
  return defineFeature({
    name: "plugins",
    needs: [],
    setup: () => ({ tools: plugins.flatMap((plugin) => plugin.tools), origin: (name) => origins.get(name) ?? "plugin" }),
  });
}
