import { describe, expect, it } from "vitest";
import { MASK, maskSecrets } from "../../src/config/mask.js";

describe("maskSecrets", () => {
  it("masks keys, tokens and secret-looking headers and environment entries, nothing else", () => {
    const config = {
      gateway: { token: "t", host: "h" },
      model_list: [{ api_key: "k", api_base: "b", custom_headers: { Authorization: "Bearer x", "X-Title": "demo" } }],
      tools: {
        mcp: {
          servers: {
            remote: { url: "https://mcp", headers: { Authorization: "Bearer y", Accept: "json" } },
            local: { command: "node", env: { API_KEY: "z", DB_PASSWORD: "p", MODE: "dev" } },
          },
        },
      },
    };
    expect(maskSecrets(config)).toEqual({
      gateway: { token: MASK, host: "h" },
      model_list: [{ api_key: MASK, api_base: "b", custom_headers: { Authorization: MASK, "X-Title": "demo" } }],
      tools: {
        mcp: {
          servers: {
            remote: { url: "https://mcp", headers: { Authorization: MASK, Accept: "json" } },
            local: { command: "node", env: { API_KEY: MASK, DB_PASSWORD: MASK, MODE: "dev" } },
          },
        },
      },
    });
    expect(maskSecrets({ gateway: { token: "" } })).toEqual({ gateway: { token: "" } });
  });

  it("masks passwords and secret query parameters in URLs", () => {
    expect(maskSecrets({ url: "https://user:pw@mcp.example.com/mcp?api_key=abc&mode=x", api_base: "http://127.0.0.1:11434/v1" })).toEqual({
      url: "https://user:********@mcp.example.com/mcp?api_key=********&mode=x",
      api_base: "http://127.0.0.1:11434/v1",
    });
  });
});
