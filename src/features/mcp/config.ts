import { z } from "zod";
import { argumentSecrets, headerSecrets, namedSecrets, urlSecrets } from "../../config/secrets.js";

/** The MCP feature's config: `tools.mcp` (README, "MCP servers"). */

export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** An MCP server: a command to start (stdio) or a URL to reach (streamable HTTP). */
export const mcpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional().describe("Program that speaks MCP on stdio."),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional().describe("Extra environment for the command."),
    cwd: z.string().optional().describe("Working directory of the command, relative to the config file."),
    url: z.url().optional().describe("An MCP server over streamable HTTP."),
    headers: z.record(z.string(), z.string()).optional(),
    timeout_ms: z.int().min(1).max(86_400_000).optional().describe("Time limit of one call of its tools in ms (default 60000)."),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({ code: "custom", message: 'give exactly one of "command" (stdio) or "url" (HTTP)' });
    }
    if (server.url !== undefined && (server.args || server.env || server.cwd)) {
      ctx.addIssue({ code: "custom", message: '"args", "env" and "cwd" go with "command", not "url"' });
    }
    if (server.command !== undefined && server.headers) {
      ctx.addIssue({ code: "custom", message: '"headers" go with "url", not "command"' });
    }
  });

export type McpServerConfig = z.output<typeof mcpServerSchema>;

export const mcpSection = z
  .strictObject({
    servers: z.record(z.string().regex(MCP_SERVER_NAME, "expected a server name: letters, digits, _ and -, at most 32"), mcpServerSchema).default({}),
    max_message_bytes: z
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .optional()
      .describe("The most one message from an MCP server may hold (default 8388608); a bigger answer fails that call alone, the server stays connected."),
  })
  .prefault({});

export type McpSection = z.output<typeof mcpSection>;

/** The secrets of the servers' places: header values, URL passwords and secret query parameters, environment entries and arguments named like secrets. */
export function mcpSecrets(section: McpSection): string[] {
  const found: string[] = [];
  const add = (value: string) => found.push(value);
  for (const server of Object.values(section.servers)) {
    headerSecrets(server.headers, add);
    urlSecrets(server.url, add);
    namedSecrets(server.env, add);
    argumentSecrets(server.args ?? [], add);
  }
  return found;
}
