type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** PicoClaw's `tools.mcp` (`enabled`, `discovery`, servers with `enabled` and `type`) as ours. */
export function mcpFromPicoclaw(raw: unknown, notes: string[]): unknown {
  if (!isObject(raw)) return raw;
  const out: Json = { ...raw };
  const off = out.enabled === false;
  delete out.enabled;
  if ("discovery" in out) {
    delete out.discovery;
    notes.push("tools.mcp.discovery is PicoClaw's and not read here; every listed server's tools are offered");
  }
  if (isObject(out.servers)) {
    const servers: Json = {};
    for (const [name, server] of Object.entries(out.servers)) {
      if (!isObject(server)) {
        servers[name] = server;
        continue;
      }
      if (off || server.enabled === false) continue;
      const { enabled: _enabled, type: _type, ...rest } = server;
      servers[name] = rest;
    }
    out.servers = servers;
  }
  return out;
}
