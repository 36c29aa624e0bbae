import { z } from "zod";
import { abortReason, messageOf } from "../errors.js";
import type { ToolCall, ToolSpec } from "../models/message.js";
import { describeIssues } from "../validation.js";
import { TOOL_NAME, type Tool, type ToolContext, type ToolResult, toolResult } from "./tool.js";

// biome-ignore lint: a registry holds tools of every argument type
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

const schemaCache = new WeakMap<AnyTool, Record<string, unknown>>();

/** The JSON Schema the model is shown for a tool's arguments (from its zod schema). */
export function parametersSchema(tool: AnyTool): Record<string, unknown> {
  let schema = schemaCache.get(tool);
  if (!schema) {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(tool.parameters, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    schema = rest;
    schemaCache.set(tool, schema);
  }
  return schema;
}

/**
 * The tools one agent may use: the same set decides what the model is shown
 * (`specs`) and what may run (`execute`), so the two can never disagree.
 * Every failure becomes an error result the model can read; only an abort
 * of the turn escapes as an exception.
 */
export class ToolSet {
  private readonly byName: ReadonlyMap<string, AnyTool>;
  private specCache: ToolSpec[] | undefined;

  constructor(tools: readonly AnyTool[], private readonly now: () => number = Date.now) {
    this.byName = new Map([...tools].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => [t.name, t]));
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Sorted by name, ready for the provider. */
  specs(): ToolSpec[] {
    this.specCache ??= [...this.byName.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: parametersSchema(tool),
    }));
    return this.specCache;
  }

  async execute(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    const name = call.function.name;
    const tool = this.byName.get(name);
    if (!tool) {
      const available = this.names();
      return toolResult.error(
        `tool "${name}" is not available to this agent; ${available.length ? `available tools: ${available.join(", ")}` : "it has no tools"}`,
      );
    }
    ctx.signal.throwIfAborted();
    const started = this.now();
    ctx.events.emit("tool.start", { agentId: ctx.agentId, sessionKey: ctx.sessionKey, tool: name, callId: call.id });
    let result: ToolResult;
    try {
      result = await this.run(tool, call.function.arguments, ctx);
    } catch (error) {
      if (ctx.signal.aborted) throw abortReason(ctx.signal);
      result = toolResult.error(`tool "${name}" failed: ${messageOf(error)}`);
    }
    ctx.events.emit("tool.end", {
      agentId: ctx.agentId,
      sessionKey: ctx.sessionKey,
      tool: name,
      callId: call.id,
      isError: result.isError,
      silent: result.silent,
      durationMs: this.now() - started,
    });
    return result;
  }

  private async run(tool: AnyTool, rawArguments: string, ctx: ToolContext): Promise<ToolResult> {
    let args: unknown;
    try {
      args = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
    } catch (error) {
      return toolResult.error(`invalid arguments for tool "${tool.name}": not valid JSON (${messageOf(error)})`);
    }
    if (!tool.validatesOwnArguments) {
      const parsed = tool.parameters.safeParse(args, { reportInput: true });
      if (!parsed.success) {
        return toolResult.error(`invalid arguments for tool "${tool.name}": ${describeIssues(parsed.error).join("; ")}`);
      }
      args = parsed.data;
    }
    const result = await tool.execute(args, ctx);
    return normaliseResult(tool.name, result);
  }
}

/** Guards against plugin tools that return something that is not a ToolResult. */
function normaliseResult(name: string, result: unknown): ToolResult {
  if (result === null || typeof result !== "object" || typeof (result as ToolResult).forLLM !== "string") {
    return toolResult.error(`tool "${name}" returned no result text`);
  }
  const r = result as ToolResult;
  return {
    forLLM: r.forLLM,
    ...(typeof r.forUser === "string" ? { forUser: r.forUser } : {}),
    silent: r.silent === true,
    isError: r.isError === true,
    ...(r.details !== undefined ? { details: r.details } : {}),
  };
}
