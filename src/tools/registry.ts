import { TOOL_NAME, type Tool } from "./tool.js";

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every argument type
export type AnyTool = Tool<any>;

/** Every tool the gateway knows, by name. Names are unique. */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.add(tool);
  }

  add(tool: AnyTool): void {
    if (!TOOL_NAME.test(tool.name)) throw new TypeError(`tool name "${tool.name}" must match ${TOOL_NAME}`);
    if (this.tools.has(tool.name)) throw new TypeError(`two tools are named "${tool.name}"`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  all(): AnyTool[] {
    return this.names().map((name) => this.tools.get(name)!);
  }
}
