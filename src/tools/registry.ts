import { z } from "zod";
import { abortReason, messageOf } from "../errors.js";
import type { ToolCall, ToolSpec } from "../models/message.js";
import { describeIssues } from "../validation.js";
import { SessionState } from "../runtime/session-state.js";
import { joinSignals } from "../signals.js";
import { type CallContext, TOOL_NAME, type Tool, type ToolResult, type ToolState, toolResult } from "./tool.js";

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
  if (tool.jsonSchema) return tool.jsonSchema;
  let schema = schemaCache.get(tool);
  if (!schema) {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(tool.parameters, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    schema = rest;
    schemaCache.set(tool, schema);
  }
  return schema;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** What a tool set needs from its runtime. */
export interface ToolSetOptions {
  now?: () => number;
  /** The time limit of one call of `tool` in ms (0: none). */
  timeoutMs?: (tool: AnyTool) => number;
  /** Where `ctx.state` keeps each tool's per-session state. */
  state?: ToolStates;
}

/**
 * Per-session state of every tool: one value per (agent, session, tool).
 * Register it with the runtime's session lifecycle and `/clear` and the end
 * of a sub-turn drop it.
 */
export class ToolStates extends SessionState<Map<string, unknown>> {
  view(tool: string, agentId: string, sessionKey: string): ToolState {
    return {
      get: () => this.get(agentId, sessionKey)?.get(tool),
      set: (value) => {
        let values = this.get(agentId, sessionKey);
        if (!values) this.set(agentId, sessionKey, (values = new Map()));
        values.set(tool, value);
      },
      delete: () => {
        const values = this.get(agentId, sessionKey);
        if (values?.delete(tool) && values.size === 0) this.delete(agentId, sessionKey);
      },
    };
  }
}

class ToolTimeout extends Error {}

/**
 * The tools one agent may use: the same set decides what the model is shown
 * (`specs`) and what may run (`execute`), so the two can never disagree.
 * Every failure becomes an error result the model can read (a tool that
 * throws, or runs past its time limit); only an abort of the turn escapes
 * as an exception.
 */
export class ToolSet {
  private readonly byName: ReadonlyMap<string, AnyTool>;
  private specCache: ToolSpec[] | undefined;
  private readonly now: () => number;
  private readonly timeoutMs: (tool: AnyTool) => number;
  private readonly state: ToolStates;

  constructor(tools: readonly AnyTool[], opts: ToolSetOptions = {}) {
    this.byName = new Map([...tools].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => [t.name, t]));
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? ((tool) => tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
    this.state = opts.state ?? new ToolStates();
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

  async execute(call: ToolCall, ctx: CallContext): Promise<ToolResult> {
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

  private async run(tool: AnyTool, rawArguments: string, ctx: CallContext): Promise<ToolResult> {
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
    const limit = this.timeoutMs(tool);
    const state = this.state.view(tool.name, ctx.agentId, ctx.sessionKey);
    // A call ends when the tool answers, when the turn is aborted (even if the tool ignores
    // its signal: /stop and subagent time limits must not wait for it), or past its limit.
    const stop = new AbortController();
    const joined = joinSignals([ctx.signal, stop.signal]);
    const signal = joined.signal;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cut = new Promise<ToolResult>((resolve, reject) => {
      onAbort = () => reject(abortReason(ctx.signal));
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (limit > 0) {
        timer = setTimeout(() => {
          stop.abort(new ToolTimeout(`tool "${tool.name}" timed out`));
          resolve(toolResult.error(`tool "${tool.name}" did not finish within ${limit} ms (tools.${tool.name}.timeout_ms); try again or do without it`));
        }, limit);
      }
    });
    try {
      const running = Promise.resolve().then(() => tool.execute(args, { ...ctx, state, signal }));
      return normaliseResult(tool.name, await Promise.race([running, cut]));
    } catch (error) {
      if (ctx.signal.aborted) throw abortReason(ctx.signal);
      if (stop.signal.aborted) return cut;
      throw error;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort!);
      // Whatever an abandoned call does later is ignored.
      stop.abort(new ToolTimeout(`tool "${tool.name}" call is over`));
      joined.dispose();
      cut.catch(() => {});
    }
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
