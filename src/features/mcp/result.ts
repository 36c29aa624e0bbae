import { type ToolResult, toolResult } from "../../tools/tool.js";

/** What a `tools/call` answer may hold (the SDK has checked its shape). */
export interface McpCallAnswer {
  content?: readonly unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

type Item = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Decoded size of base64 data, for a one-line description. */
function bytesOf(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

function describeBinary(kind: string, item: Item, data: unknown): string {
  const mime = str(item.mimeType) ?? "unknown type";
  const size = typeof data === "string" ? `, ${bytesOf(data)} bytes` : "";
  return `[${kind}: ${mime}${size}]`;
}

/** One content item as text for the model: text as is, anything else described briefly. */
function describeItem(raw: unknown): string {
  if (raw === null || typeof raw !== "object") return "[content the gateway cannot show]";
  const item = raw as Item;
  switch (item.type) {
    case "text":
      return str(item.text) ?? "";
    case "image":
      return describeBinary("image", item, item.data);
    case "audio":
      return describeBinary("audio", item, item.data);
    case "resource_link": {
      const name = str(item.name) ?? str(item.title);
      return `[resource link: ${name ? `${name} ` : ""}<${str(item.uri) ?? "?"}>]`;
    }
    case "resource": {
      const resource = (item.resource ?? {}) as Item;
      const uri = str(resource.uri) ?? "?";
      const text = str(resource.text);
      if (text !== undefined) return `[resource <${uri}>]\n${text}`;
      return `[resource <${uri}>: ${str(resource.mimeType) ?? "unknown type"}${typeof resource.blob === "string" ? `, ${bytesOf(resource.blob)} bytes` : ""}]`;
    }
    default:
      return `[${typeof item.type === "string" ? item.type : "unknown"} content the gateway cannot show]`;
  }
}

/**
 * An MCP tool's answer as the gateway's result: every content item in order
 * (text joined by new lines, other content described in brackets), else the
 * structured content as JSON. `isError` makes it an error result. The model
 * decides what the user sees, so there is never a `forUser`.
 */
export function mcpResult(server: string, tool: string, answer: McpCallAnswer): ToolResult {
  let text = (answer.content ?? []).map(describeItem).join("\n");
  if (text === "" && answer.structuredContent !== undefined) text = JSON.stringify(answer.structuredContent);
  if (answer.isError === true) {
    return toolResult.error(text || `MCP tool "${tool}" of server "${server}" reported an error without a message`);
  }
  return toolResult.text(text || `MCP tool "${tool}" of server "${server}" returned no output`);
}
