import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import { FIXTURE_SERVER } from "../support/mcp.js";
import { openaiConfig, pluggedHarness, recordingLogger, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

/**
 * A secret never reaches the model, a user or the log, nor config check's
 * output: through a real MCP server process that prints one on stderr and
 * puts it in an error, a plugin tool whose thrown error quotes one, and a
 * config whose secrets come from ${VAR}, a .env and an environment override.
 */

const model = useScriptedModel();
const plugin = path.resolve(import.meta.dirname, "..", "fixtures", "plugins", "leaky.js");

const MCP_SECRET = "mcp-stderr-secret-4711";
const PLUGIN_SECRET = "hunter2-plugin-secret";

describe("secrets given away by tools", () => {
  it("an MCP server's stderr and errors and a plugin's thrown error reach the model, delivered and the log as ***", async () => {
    const h = await pluggedHarness({
      env: { MCP_SECRET },
      files: { ".env": `PLUGIN_PASSWORD=${PLUGIN_SECRET}\n` },
      config: {
        ...openaiConfig(model.server.url),
        tools: {
          plugins: [plugin],
          mcp: { servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], env: { FIXTURE_HELLO: "${MCP_SECRET}" } } } },
        },
      },
    });
    const { status, json } = await h.chat({ message: [call("mcp_fx_leak", {}), call("leaky", {})].join("\n") });
    expect(status).toBe(200);
    expect(json.reply).toBe('done: could not log in with *** | tool "leaky" failed: login refused for user bot with password ***');
    expect(json.delivered).toEqual([{ from: "agent", text: json.reply }]);

    await eventually(() => expect(h.logger.lines).toContainEqual({ level: "info", message: 'MCP server "fx" says: logging in with ***' }));
    const requests = JSON.stringify(model.server.requests.map((r) => r.body));
    const everything = [requests, JSON.stringify(json), JSON.stringify(h.logger.lines), JSON.stringify(await h.runtime.historyOf(json.session_key))].join("\n");
    expect(everything).toContain("***");
    expect(everything).not.toContain(MCP_SECRET);
    expect(everything).not.toContain(PLUGIN_SECRET);
  });
});

describe("a secret known by its shape only", () => {
  it("an MCP server given a database URL with a password (in an entry named like nothing secret) that echoes it: the model, the reply, the history and the log get ***", async () => {
    const password = "shape-only-db-password-42";
    const h = await pluggedHarness({
      config: {
        ...openaiConfig(model.server.url),
        tools: {
          mcp: { servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], env: { FIXTURE_HELLO: `postgres://app:${password}@db.internal/app` } } } },
        },
      },
    });
    const { status, json } = await h.chat({ message: call("mcp_fx_leak", {}) });
    expect(status).toBe(200);
    await eventually(() => expect(h.logger.lines.some((line) => line.message.startsWith('MCP server "fx" says: logging in with'))).toBe(true));
    const requests = JSON.stringify(model.server.requests.map((r) => r.body));
    const everything = [requests, JSON.stringify(json), JSON.stringify(h.logger.lines), JSON.stringify(await h.runtime.historyOf(json.session_key))].join("\n");
    expect(everything).toContain("postgres://app:***@db.internal/app");
    expect(everything).not.toContain(password);
  });
});

describe("picoclaw config check", () => {
  it("shows no secret that came from ${VAR}, a .env or an environment override, nor one written in the file, anywhere in its output", async () => {
    const secrets = {
      PICOCLAW_GATEWAY_TOKEN: "gw-override-secret-1",
      QUERY_KEY: "query-env-secret-4",
      ODD_HEADER: "odd-env-secret-6",
      HELLO: "hello-env-secret-10",
      MCP_PASSWORD: "mcp-env-secret-11",
    };
    const fromDotenv = { OPENAI_API_KEY: "sk-dotenv-secret-2", DB_PASSWORD: "db-dotenv-secret-3" };
    const written = ["extra-body-secret-5", "literal-arg-secret-7", "literal-query-secret-8", "literal-bearer-secret"];
    const dir = writeProject({
      files: {
        ".env": Object.entries(fromDotenv)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(""),
      },
      config: {
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          {
            model_name: "gpt",
            provider: "openai",
            model: "m",
            api_key: "${OPENAI_API_KEY}",
            api_base: "https://api.example.com/v1?api-key=${QUERY_KEY}",
            custom_headers: { "X-Custom": "${ODD_HEADER}", Authorization: "Bearer literal-bearer-secret" },
            extra_body: { provider: { secret_token: "extra-body-secret-5" } },
          },
        ],
        tools: {
          mcp: {
            servers: {
              db: {
                command: process.execPath,
                args: [FIXTURE_SERVER, "--password=${DB_PASSWORD}", "--api-key", "literal-arg-secret-7"],
                env: { FIXTURE_HELLO: "${HELLO}" },
              },
              remote: { url: "http://admin:${MCP_PASSWORD}@127.0.0.1:9/mcp?token=literal-query-secret-8" },
            },
          },
        },
      },
    });
    const out: string[] = [];
    const err: string[] = [];
    const logger = recordingLogger();
    const code = await runCli({ argv: ["config", "check"], env: secrets, cwd: dir, stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger });
    expect(code, err.join("\n")).toBe(0);
    const shown = JSON.parse(out.join("\n"));
    expect(shown.tools.mcp.servers.db.args).toEqual([FIXTURE_SERVER, "--password=********", "--api-key", "********"]);
    const everything = [...out, ...err, JSON.stringify(logger.lines)].join("\n");
    for (const secret of [...Object.values(secrets), ...Object.values(fromDotenv), ...written]) expect(everything, secret).not.toContain(secret);
  });
});
