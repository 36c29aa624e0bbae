import type { z } from "zod";
import type { Approval } from "./approval.js";
import { withJsonSchema } from "./json-schema-tool.js";

/**
 * What a tool's `execute` knows about the call it serves, and nothing more.
 * Every field is set by the pipeline, never by the model: the agent id and
 * session key come from the turn, the signal from the client, `/stop`,
 * shutdown or the tool's time limit. A tool sees no other session, no other
 * tool's state and none of the runtime's events.
 */
export interface ToolContext<State = unknown> {
  readonly agentId: string;
  readonly sessionKey: string;
  /** The turn this call is part of, as its events name it (traces tie the call to its turn). */
  readonly turnId: string;
  /** This call's id, as the model gave it and the call's events name it. */
  readonly callId: string;
  /** Aborts on `/stop`, a client that left, shutdown or the time limit: pass it on to `fetch` and timers. */
  readonly signal: AbortSignal;
  /**
   * This tool's state for this agent and session: kept across turns,
   * dropped by `/clear` and when a sub-turn ends.
   */
  readonly state: ToolState<State>;
  /**
   * Tells the gateway's listeners (UIs, logs) what this call changed, as
   * structured data: it becomes a `tool.update` event naming this tool, call
   * and session. Never sent to the model.
   */
  publish(details: unknown): void;
}

/** A tool's per-session state (one value per tool, agent and session). */
export interface ToolState<T = unknown> {
  get(): T | undefined;
  set(value: T): void;
  delete(): void;
}

/**
 * A tool result has two audiences (PicoClaw's rule): `forLLM` always goes
 * back to the model; `forUser` reaches the chat user only when not `silent`.
 */
export interface ToolResult {
  forLLM: string;
  forUser?: string;
  silent: boolean;
  isError: boolean;
  /** Structured data for UIs and listeners (never sent to the model). */
  details?: unknown;
  /** Keep `details` (JSON) with the result in the session's history, for the tool's feature to read back after a restart (still never sent to a model). */
  keepDetails?: boolean;
}

/**
 * What `execute` may return: a `ToolResult` (from `toolResult`), or plainly
 * a string (the text for the model and the user) or any JSON value (sent to
 * the model as JSON).
 */
export type ToolOutput = ToolResult | string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

/** A tool's arguments given as JSON Schema (an object schema), for tools that already have one (an OpenAI function definition). */
export type JsonSchemaObject = { readonly type: "object"; readonly [key: string]: unknown };

export interface Tool<Args = unknown, Output extends ToolOutput = ToolOutput> {
  /** `[A-Za-z0-9_-]{1,64}`, unique in the gateway. */
  readonly name: string;
  /** Told to the model: what it is for and how to use it well. */
  readonly description: string;
  /** Arguments, checked before `execute`; also the JSON Schema the model sees. */
  readonly parameters: z.ZodType<Args>;
  /**
   * When true, `execute` receives the parsed JSON arguments unchecked and the
   * tool validates them itself (for tools whose error texts are part of
   * their contract, like `todo`); `parameters` then only describes them.
   */
  readonly validatesOwnArguments?: boolean;
  /** Whether the tool is on when the config says nothing about it. */
  readonly enabledByDefault?: boolean;
  /**
   * The JSON Schema the model is shown, when it does not come from zod (an
   * MCP server's tool). `parameters` then only checks the arguments.
   */
  readonly jsonSchema?: Record<string, unknown>;
  /**
   * How long one call may run before it is abandoned with an error result,
   * unless `tools.<name>.timeout_ms` says otherwise; 0 for no limit (tools
   * with limits of their own, such as subagents). Default 60 s.
   */
  readonly timeoutMs?: number;
  /** The config key that set `timeoutMs` (an MCP server's `timeout_ms`), named when a call runs out of time. */
  readonly timeoutSetting?: string;
  /** Its approval policy when tools.<name>.approval and AGENT.md say nothing (default "allow"; exec's is "ask"). */
  readonly defaultApproval?: Approval;
  /** Offered only in a user's own session, never to a subagent (spawn: a child's one turn could not take its result). */
  readonly notInSubagents?: boolean;
  /**
   * A refusal known before the call runs (a guard that would refuse it
   * anyway): checked after the arguments and before a person is asked to
   * approve the call, so nobody is asked about a call that cannot run. An
   * error result refuses it; undefined lets it go on. `execute` must still
   * check for itself: things may change while a person decides.
   */
  precheck?(args: Args, ctx: Pick<ToolContext, "agentId" | "sessionKey">): ToolResult | undefined | Promise<ToolResult | undefined>;
  execute(args: Args, ctx: ToolContext): Promise<Output> | Output;
}

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface ToolFields {
  name: string;
  description: string;
  validatesOwnArguments?: boolean;
  enabledByDefault?: boolean;
  jsonSchema?: Record<string, unknown>;
  timeoutMs?: number;
  notInSubagents?: boolean;
  defaultApproval?: Approval;
}

/**
 * Declares a tool. With a zod schema as `parameters`, its argument type is
 * inferred from it; with a plain JSON Schema object, arguments are checked
 * against it (ajv) before `execute` runs. The type of its per-session state
 * comes from annotating `ctx`: `execute: (args, ctx: ToolContext<string[]>) => ...`.
 */
export function defineTool<S extends z.ZodType, State = unknown, Output extends ToolOutput = ToolOutput>(
  tool: ToolFields & {
    parameters: S;
    precheck?(args: z.output<S>, ctx: Pick<ToolContext, "agentId" | "sessionKey">): ToolResult | undefined | Promise<ToolResult | undefined>;
    execute(args: z.output<S>, ctx: ToolContext<State>): Promise<Output> | Output;
  },
): Tool<z.output<S>, Output>;
export function defineTool<State = unknown, Output extends ToolOutput = ToolOutput>(
  tool: ToolFields & {
    parameters: JsonSchemaObject;
    precheck?(args: Record<string, unknown>, ctx: Pick<ToolContext, "agentId" | "sessionKey">): ToolResult | undefined | Promise<ToolResult | undefined>;
    execute(args: Record<string, unknown>, ctx: ToolContext<State>): Promise<Output> | Output;
  },
): Tool<Record<string, unknown>, Output>;
export function defineTool(tool: ToolFields & { parameters: unknown; execute(args: never, ctx: never): unknown }): Tool {
  if (!TOOL_NAME.test(tool.name)) throw new TypeError(`tool name "${tool.name}" must match ${TOOL_NAME}`);
  if (isZod(tool.parameters)) return tool as unknown as Tool;
  const converted = withJsonSchema(tool as unknown as Tool);
  if (typeof converted === "string") throw new TypeError(`tool "${tool.name}": ${converted}`);
  return converted;
}

/** Whether a value is a zod 4 schema. */
export function isZod(value: unknown): value is z.ZodType {
  const schema = value as { safeParse?: unknown; _zod?: unknown } | null | undefined;
  return !!schema && typeof schema.safeParse === "function" && !!schema._zod;
}

/** Result helpers, one per kind of answer. */
export const toolResult = {
  /** For the model; and, when given, a different text for the user. */
  text: (forLLM: string, forUser?: string): ToolResult => ({ forLLM, ...(forUser === undefined ? {} : { forUser }), silent: false, isError: false }),
  /** The same text for the model and the user. */
  user: (text: string): ToolResult => ({ forLLM: text, forUser: text, silent: false, isError: false }),
  /** For the model; may never reach the user, whatever `forUser` says. */
  silent: (forLLM: string): ToolResult => ({ forLLM, silent: true, isError: false }),
  /** A failure the model can read and act on. */
  error: (message: string): ToolResult => ({ forLLM: message, silent: false, isError: true }),
};
