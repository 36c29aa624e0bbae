import { setImmediate as nextTurn } from "node:timers/promises";
import { z } from "zod";
import { abortReason, messageOf } from "../errors.js";
import type { ToolCall, ToolSpec } from "../models/message.js";
import { joinSignals } from "../signals.js";
import { parseReporting, problemsLine } from "../validation.js";
import { type ApprovalGate, NOBODY_TO_ASK } from "./approval.js";
import type { AnyTool } from "./registry.js";
import { type Redact, noRedaction } from "./redact.js";
import { DEFAULT_MAX_RESULT_BYTES, capResult } from "./result-size.js";
import { type ToolResult, toolResult } from "./tool.js";
import { ToolStates } from "./tool-states.js";

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
  /** The config key that set that limit, named in the time-out message. */
  timeoutSetting?: (tool: AnyTool) => string;
  /** Where `ctx.state` keeps each tool's per-session state. */
  state?: ToolStates;
  /** The most UTF-8 bytes a result's text keeps (tools.max_result_bytes; default 64 KiB); the rest is cut, with a note. */
  maxResultBytes?: number;
  /** Scrubs configured secrets from every result's texts (default: none known). */
  redact?: Redact;
  /** The tools whose calls a person must allow first (approval policy `ask`). */
  asks?: ReadonlySet<string>;
}

/** What a tool set hears about each call; the runtime turns it into events. */
export interface CallObserver {
  started(tool: string, callId: string): void;
  ended(tool: string, callId: string, result: ToolResult, durationMs: number): void;
  /** A tool's `ctx.publish(details)`. */
  published(tool: string, callId: string, details: unknown): void;
}

/** Who a call is for, set by the pipeline: the turn's agent and session, and what stops it. */
export interface CallScope {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly turnId: string;
  readonly signal: AbortSignal;
  readonly observer?: CallObserver;
  /** Asks a person before a call of a tool under `ask` runs; without one, such calls are denied. */
  readonly gate?: ApprovalGate;
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
  private readonly timeoutSetting: (tool: AnyTool) => string;
  private readonly state: ToolStates;
  private readonly maxResultBytes: number;
  private readonly redact: Redact;
  private readonly asks: ReadonlySet<string>;
  /** Per tool, the reason its calls' signals abort with once a call is over (made once: an Error costs a stack trace). */
  private readonly overReasons = new Map<string, ToolTimeout>();

  constructor(tools: readonly AnyTool[], opts: ToolSetOptions = {}) {
    this.byName = new Map([...tools].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => [t.name, t]));
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? ((tool) => tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
    this.timeoutSetting = opts.timeoutSetting ?? ((tool) => tool.timeoutSetting ?? `tools.${tool.name}.timeout_ms`);
    this.state = opts.state ?? new ToolStates();
    this.maxResultBytes = opts.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.redact = opts.redact ?? noRedaction;
    this.asks = opts.asks ?? new Set();
  }

  /** Whether a call of the tool waits for a person's decision first. */
  asksFor(name: string): boolean {
    return this.asks.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /**
   * Makes the specs ahead of the first call that needs them, one tool's
   * schema per turn of the event loop, so that a request that comes
   * meanwhile (a health check just after start) is answered first.
   */
  async warm(): Promise<void> {
    if (this.specCache) return;
    for (const tool of this.byName.values()) {
      parametersSchema(tool);
      await nextTurn();
    }
    this.specs();
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

  /**
   * Runs one call. Whatever it answers (an error included) reaches the model
   * and the user only through here: without configured secrets, within
   * maxResultBytes.
   */
  async execute(call: ToolCall, ctx: CallScope): Promise<ToolResult> {
    const name = call.function.name;
    const tool = this.byName.get(name);
    if (!tool) {
      const available = this.names();
      return this.finish(
        toolResult.error(`tool "${name}" is not available to this agent; ${available.length ? `available tools: ${available.join(", ")}` : "it has no tools"}`),
      );
    }
    ctx.signal.throwIfAborted();
    const started = this.now();
    ctx.observer?.started(name, call.id);
    let result: ToolResult;
    try {
      result = await this.run(tool, call, ctx);
    } catch (error) {
      if (ctx.signal.aborted) throw abortReason(ctx.signal);
      result = toolResult.error(`tool "${name}" failed: ${messageOf(error)}`);
    }
    result = this.finish(result);
    ctx.observer?.ended(name, call.id, result, this.now() - started);
    return result;
  }

  /** A result as it may enter the history: its texts scrubbed of secrets (first, so no cut leaves half of one), then within maxResultBytes. */
  private finish(result: ToolResult): ToolResult {
    const forLLM = this.redact(result.forLLM);
    const forUser = result.forUser === undefined ? undefined : this.redact(result.forUser);
    const scrubbed = forLLM === result.forLLM && forUser === result.forUser ? result : { ...result, forLLM, ...(forUser === undefined ? {} : { forUser }) };
    return capResult(scrubbed, this.maxResultBytes);
  }

  private async run(tool: AnyTool, call: ToolCall, ctx: CallScope): Promise<ToolResult> {
    const rawArguments = call.function.arguments;
    let args: unknown;
    try {
      args = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
    } catch (error) {
      return toolResult.error(`invalid arguments for tool "${tool.name}": not valid JSON (${messageOf(error)})`);
    }
    if (!tool.validatesOwnArguments) {
      const parsed = parseReporting(tool.parameters, args);
      if (!parsed.success) {
        return toolResult.error(`invalid arguments for tool "${tool.name}": ${problemsLine(parsed.error)}`);
      }
      args = parsed.data;
    }
    const { agentId, sessionKey, turnId } = ctx;
    // What the tool would refuse anyway is refused before anyone is asked.
    let refused = tool.precheck?.(args, { agentId, sessionKey });
    // Awaited only when it is a promise: a sync precheck leaves the call as it was, with no turn of the event loop.
    if (refused instanceof Promise) refused = await refused;
    if (refused) return refused;
    // A person decides before the call runs (its time limit starts after); a denied call ran nothing.
    if (this.asks.has(tool.name)) {
      const verdict = ctx.gate
        ? await ctx.gate.ask({ agentId, sessionKey, turnId, callId: call.id, tool: tool.name, arguments: args }, ctx.signal)
        : {
            allowed: false as const,
            reason: `${tool.name} was not run: it needs a person's approval (tools.${tool.name}.approval is "ask") and ${NOBODY_TO_ASK}`,
          };
      if (!verdict.allowed) return toolResult.error(verdict.reason);
    }
    // Aborted while a precheck or a person was awaited: the abort listener below would never fire.
    if (ctx.signal.aborted) throw abortReason(ctx.signal);
    const limit = this.timeoutMs(tool);
    const state = this.state.view(tool.name, ctx.agentId, ctx.sessionKey);
    // A call ends when the tool answers, when the turn is aborted (even if the tool ignores
    // its signal: /stop and subagent time limits must not wait for it), or past its limit.
    const joined = joinSignals([ctx.signal]);
    const signal = joined.signal;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cut = new Promise<ToolResult>((resolve, reject) => {
      onAbort = () => reject(abortReason(ctx.signal));
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (limit > 0) {
        timer = setTimeout(() => {
          joined.abort(new ToolTimeout(`tool "${tool.name}" timed out`));
          resolve(toolResult.error(`tool "${tool.name}" did not finish within ${limit} ms (${this.timeoutSetting(tool)}); try again or do without it`));
        }, limit);
      }
    });
    try {
      const { observer } = ctx;
      // Details published after the call is over (an abandoned tool carrying on) are dropped.
      const publish = (details: unknown) => {
        if (!signal.aborted) observer?.published(tool.name, call.id, details);
      };
      const running = Promise.resolve().then(() => tool.execute(args, { agentId, sessionKey, turnId, callId: call.id, signal, state, publish }));
      return normaliseResult(tool.name, await Promise.race([running, cut]));
    } catch (error) {
      if (ctx.signal.aborted) throw abortReason(ctx.signal);
      if (signal.aborted) return cut;
      throw error;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort!);
      // Whatever an abandoned call does later is ignored.
      joined.abort(this.overReason(tool.name));
      cut.catch(() => {});
    }
  }

  private overReason(name: string): ToolTimeout {
    let reason = this.overReasons.get(name);
    if (!reason) this.overReasons.set(name, (reason = new ToolTimeout(`tool "${name}" call is over`)));
    return reason;
  }
}

/**
 * What a tool returned, as a ToolResult: a ToolResult as it is (its fields
 * checked), a string as the model's text, any other JSON value as JSON text
 * for the model; nothing at all, or a value JSON cannot carry, as an error.
 */
export function normaliseResult(name: string, result: unknown): ToolResult {
  if (typeof result === "string") return toolResult.text(result);
  if (result === undefined) return toolResult.error(`tool "${name}" returned nothing; return a string, a JSON value or a toolResult`);
  if (result === null || typeof result !== "object" || typeof (result as ToolResult).forLLM !== "string") {
    let json: string | undefined;
    try {
      json = JSON.stringify(result);
    } catch (error) {
      return toolResult.error(`tool "${name}" returned a value that is not JSON (${messageOf(error)})`);
    }
    return json === undefined ? toolResult.error(`tool "${name}" returned a value that is not JSON (${typeof result})`) : toolResult.text(json);
  }
  const r = result as ToolResult;
  return {
    forLLM: r.forLLM,
    ...(typeof r.forUser === "string" ? { forUser: r.forUser } : {}),
    silent: r.silent === true,
    isError: r.isError === true,
    ...(r.details !== undefined ? { details: r.details } : {}),
    ...(r.details !== undefined && r.keepDetails === true ? { keepDetails: true } : {}),
  };
}
