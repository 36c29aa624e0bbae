import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { z } from "zod";
import { describeIssues } from "../../validation.js";

/** One tool as a server lists it, before the gateway has checked its schema. */
export interface RemoteTool {
  name: string;
  description: string | undefined;
  inputSchema: unknown;
}

export interface Listing {
  tools: RemoteTool[];
  /** Entries that are not even tools (no name...), one line each. */
  problems: string[];
}

// Deliberately loose: the SDK's own `listTools` rejects the whole list when
// one tool's schema is odd; the gateway checks each tool on its own instead.
const page = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const entry = z.looseObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.unknown(),
});

const MAX_PAGES = 100;

/** Every tool the server offers, following its pages. */
export async function listRemoteTools(client: Client, options: RequestOptions): Promise<Listing> {
  const tools: RemoteTool[] = [];
  const problems: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const answer = await client.request({ method: "tools/list", ...(cursor ? { params: { cursor } } : {}) }, page, options);
    for (const raw of answer.tools) {
      const parsed = entry.safeParse(raw);
      if (parsed.success) {
        const { name, title, description, inputSchema } = parsed.data;
        tools.push({ name, description: description ?? title, inputSchema });
      } else {
        problems.push(`it listed an entry that is not a tool (${describeIssues(parsed.error).join("; ")})`);
      }
    }
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
  return { tools, problems };
}
