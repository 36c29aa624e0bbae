import { z } from "zod";
import { type Tool, type ToolContext, type ToolResult, toolResult } from "../../tools/tool.js";
import type { McpConnection } from "./connection.js";
import type { CheckedSchema } from "../../tools/json-schema.js";

export type ValidSchema = Extract<CheckedSchema, { ok: true }>;

/** What a server says about one tool, after the gateway checked it. */
export interface McpToolDefinition {
  description: string;
  schema: ValidSchema;
}

/**
 * One tool of an MCP server, as the gateway's `Tool`. The object lives as
 * long as the hub: when the server restarts and lists the tool again, its
 * description and schema are updated in place; when the server stops
 * offering it, calls answer an error result.
 */
export class McpTool implements Tool<unknown> {
  /** Only describes the arguments: the server's JSON Schema (ajv) checks them. */
  readonly parameters = z.record(z.string(), z.unknown());
  readonly validatesOwnArguments = true;
  readonly enabledByDefault = true;
  /** Whether the server offered this tool in its latest list. */
  offered = true;
  private definition: McpToolDefinition;

  constructor(
    readonly name: string,
    readonly server: string,
    readonly remoteName: string,
    definition: McpToolDefinition,
    private readonly connection: McpConnection,
    /** The server's `timeout_ms` (else the default) and, when the server set it, its config key. */
    own: { ms: number; setting: string | undefined },
    /** The limit a call gets and the config key that set it (`tools.<name>.timeout_ms` wins over the server's). */
    private readonly callLimit: { ms: (tool: McpTool) => number; setting: (tool: McpTool) => string },
  ) {
    this.definition = definition;
    this.timeoutMs = own.ms;
    if (own.setting !== undefined) this.timeoutSetting = own.setting;
  }

  readonly timeoutMs: number;
  readonly timeoutSetting: string | undefined;

  get description(): string {
    return this.definition.description;
  }

  get jsonSchema(): Record<string, unknown> {
    return this.definition.schema.schema;
  }

  /** Takes the server's latest word on this tool; true when what the model sees changed. */
  update(definition: McpToolDefinition): boolean {
    const changed =
      !this.offered ||
      definition.description !== this.definition.description ||
      JSON.stringify(definition.schema.schema) !== JSON.stringify(this.definition.schema.schema);
    this.definition = definition;
    this.offered = true;
    return changed;
  }

  async execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const problems = this.definition.schema.validate(args);
    if (problems.length > 0) return toolResult.error(`invalid arguments for tool "${this.name}": ${problems.join("; ")}`);
    if (!this.offered) {
      return toolResult.error(`MCP server "${this.server}" no longer offers the tool "${this.remoteName}"; do without it`);
    }
    return this.connection.call(this.remoteName, args as Record<string, unknown>, ctx.signal, this.callLimit.ms(this), this.callLimit.setting(this));
  }
}
