import { toolVariableName } from "../../config/env.js";
import { sectionsOf } from "../../config/layout.js";
import { ConfigError, messageOf } from "../../errors.js";
import type { Command } from "../../port/command.js";
import { type Capability, EMBEDDER_ORIGIN, type Feature, type FeatureHost } from "../../port/feature.js";
import { MAX_SECTION_BYTES, type PromptSection } from "../../port/prompt.js";
import type { FeatureRoute } from "../../port/route.js";
import type { SessionScoped } from "../../session/state.js";
import type { AnyTool } from "../../tools/registry.js";
import { ToolCatalog } from "./tool-catalog.js";

type Step = () => Promise<void> | void;

/**
 * What the features contributed, collected once: their tools (with origins
 * and per-agent forms), commands, per-session state, routes, warnings and
 * what each offers its embedder (`api`), and their lifecycle: `connect`
 * (MCP servers reached, their tools added as they come) and `start` when
 * the gateway listens (chat channels begin to take input), `stopInput`
 * first on shutdown, `close` last. Each feature is set up with the host
 * capabilities it asked for and nothing else, and its own config sections.
 */
export class FeatureSet {
  readonly tools = new ToolCatalog();
  readonly commands: Command[] = [];
  readonly sessionState: SessionScoped[] = [];
  readonly routes: FeatureRoute[] = [];
  /** Folders every agent's file tools may read besides its workspace. */
  readonly readPaths: string[] = [];
  readonly prompt: PromptSection[] = [];
  readonly warnings: string[] = [];
  /** Name prefixes of tools that arrive later (`laterTools`). */
  readonly laterTools: string[] = [];
  private readonly starters: { name: string; start: Step }[] = [];
  private readonly connectors: { name: string; connect: () => Promise<readonly string[]> | readonly string[] }[] = [];
  private readonly stoppers: Step[] = [];
  private readonly closers: Step[] = [];
  private readonly apis = new Map<Feature, unknown>();
  private started = false;

  /** Sets each feature up with its share of `host` and its sections of `config`, in order; loose `tools` of the embedding program come last. */
  install(
    features: readonly Feature[],
    host: Omit<FeatureHost, "state">,
    config: unknown,
    tools: readonly AnyTool[],
    own: (feature: Feature) => Pick<FeatureHost, "state">,
    /** Names the runtime's own durable state takes (`approvals`): no feature may have one. */
    reserved: readonly string[] = [],
  ): void {
    const names = new Set<string>();
    for (const feature of features) {
      if (reserved.includes(feature.name))
        throw new ConfigError([`a feature may not be named "${feature.name}": the runtime's own durable state has that name`]);
    }
    for (const feature of features) {
      // A feature's name is its durable state's namespace too: two of one name would share it.
      if (names.has(feature.name)) throw new ConfigError([`two features are named "${feature.name}"; each feature needs a name of its own`]);
      names.add(feature.name);
      const parts = feature.setup(share({ ...host, ...own(feature) }, feature.needs ?? []), sectionsOf(config, feature.config));
      if (parts.api !== undefined) this.apis.set(feature, parts.api);
      this.tools.addAll(parts.tools ?? [], parts.origin ?? (() => `feature "${feature.name}"`), parts.toolFor?.bind(parts));
      this.commands.push(...(parts.commands ?? []));
      this.sessionState.push(...(parts.sessionState ?? []));
      this.routes.push(...(parts.routes ?? []));
      this.readPaths.push(...(parts.readPaths ?? []));
      for (const section of parts.prompt ?? []) {
        if (!Number.isInteger(section.maxBytes) || section.maxBytes < 1 || section.maxBytes > MAX_SECTION_BYTES) {
          throw new TypeError(`feature "${feature.name}": prompt section "${section.name}": maxBytes must be a whole number from 1 to ${MAX_SECTION_BYTES}`);
        }
        this.prompt.push(section);
      }
      this.warnings.push(...(parts.warnings ?? []));
      this.laterTools.push(...(parts.laterTools ?? []));
      if (parts.connect) this.connectors.push({ name: feature.name, connect: parts.connect.bind(parts) });
      if (parts.start) this.starters.push({ name: feature.name, start: parts.start.bind(parts) });
      if (parts.stop) this.stoppers.push(parts.stop.bind(parts));
      if (parts.close) this.closers.push(parts.close.bind(parts));
    }
    this.tools.addAll(tools, () => EMBEDDER_ORIGIN);
  }

  /** What a feature offered its embedder (`api`), or undefined when it is not installed or offered none. */
  apiOf<Api>(feature: Feature<Api>): Api | undefined {
    return this.apis.get(feature) as Api | undefined;
  }

  /** Tools that arrive after start-up (an MCP server that came up late); says which were skipped for a name already taken. */
  addLate(tools: readonly AnyTool[], origin: string): string[] {
    const skipped: string[] = [];
    for (const tool of tools) {
      const clash = this.tools.originOf(tool.name);
      if (clash) skipped.push(`${origin}: its tool "${tool.name}" clashes with the tool of that name from ${clash}; skipped`);
      else this.tools.addAll([tool], () => origin);
    }
    return skipped;
  }

  /** Starts every feature's input at once; one that fails leaves the others running, and comes back as a warning naming it. */
  async start(): Promise<string[]> {
    if (this.started) return [];
    this.started = true;
    const results = await Promise.allSettled(this.starters.map(async ({ start }) => start()));
    return results.flatMap((result, i) => (result.status === "rejected" ? [`${this.starters[i]!.name} did not start: ${messageOf(result.reason)}`] : []));
  }

  /** Whether a tool of this name may arrive later (it starts with one of `laterTools`), or a variable's spelling of one (`toolVariableName`). */
  arrivesLater(name: string): boolean {
    return this.laterTools.some((prefix) => name.startsWith(prefix) || name.startsWith(toolVariableName(prefix)));
  }

  /** Each feature's `connect`, all at once: their warnings, and one for each that failed, naming it. */
  async connect(): Promise<string[]> {
    const results = await Promise.allSettled(this.connectors.map(async ({ connect }) => connect()));
    return results.flatMap((result, i) =>
      result.status === "rejected" ? [`${this.connectors[i]!.name} did not connect: ${messageOf(result.reason)}`] : [...result.value],
    );
  }

  /** Stops the features' input (chat channels stop polling), so no new message arrives. */
  async stopInput(): Promise<void> {
    await Promise.allSettled(this.stoppers.splice(0).map(async (stop) => stop()));
  }

  /** Closes the features (MCP servers stop), once every turn has ended. */
  async close(): Promise<void> {
    await Promise.allSettled(this.closers.splice(0).map(async (close) => close()));
  }
}

/** The capabilities a feature asked for, and no other. */
function share(host: FeatureHost, needs: readonly Capability[]): FeatureHost {
  const shared: Partial<Record<Capability, unknown>> = {};
  for (const capability of needs) {
    if (!Object.hasOwn(host, capability)) throw new TypeError(`no host capability "${capability}"`);
    shared[capability] = host[capability];
  }
  return shared as FeatureHost;
}
