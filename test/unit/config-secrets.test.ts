import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/house.js";
import { MASK, maskSecrets } from "../../src/config/mask.js";
import { problemsOf, sectionAt, writeProject } from "../support/project.js";

/**
 * The loader knows which values are secrets by where they came from
 * (`${VAR}`, a `.env`, the token override) and by their place in the config,
 * and `config check` masks them by value, wherever they appear.
 */

const ENV = {
  PICOCLAW_GATEWAY_TOKEN: "gw-override-secret-1",
  QUERY_KEY: "query-env-secret-4",
  ODD_HEADER: "odd-env-secret-6",
  HELLO: "hello-env-secret-10",
  MCP_PASSWORD: "mcp-env-secret-11",
  SHORT: "ab",
};

const DOTENV = "OPENAI_API_KEY=sk-dotenv-secret-2\nDB_PASSWORD=db-dotenv-secret-3\nUNUSED_API_TOKEN=unused-dotenv-secret-9\nLOG_STYLE=pretty\n";

const CONFIG = {
  agents: { dir: "lab-agents" },
  channel_list: [
    { type: "telegram", token: "123456:literal-bot-token-13", allow_from: [42] },
    { type: "discord", token: "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.literal-discord-token-14", allow_from: ["42"] },
  ],
  model_list: [
    { model_name: "local", provider: "builtin", model: "scripted" },
    {
      model_name: "gpt",
      provider: "openai",
      model: "m",
      api_key: "${OPENAI_API_KEY}",
      api_base: "https://api.example.com/v1?api-key=${QUERY_KEY}",
      custom_headers: { "X-Custom": "${ODD_HEADER}", Authorization: "Bearer literal-bearer-secret", "X-Title": "demo" },
      extra_body: { provider: { secret_token: "extra-body-secret-5", order: ["a"] }, mode: "fast" },
    },
  ],
  tools: {
    mcp: {
      servers: {
        db: {
          command: "node",
          args: ["server.js", "--password=${DB_PASSWORD}", "--api-key", "literal-arg-secret-7", "--verbose"],
          env: {
            FIXTURE_HELLO: "${HELLO}",
            MODE: "${SHORT}",
            DB_PASS: "literal-env-secret-12",
            // Named like nothing secret: found by their shape.
            DATABASE_URL: "postgres://app:url-shaped-secret-15@db.internal:5432/app",
            CONNECTION: "Server=db;User Id=app;Password=pair-shaped-secret-16;",
            GITHUB: "ghp_shapedSecret17abcdefghijklmnopqrstuv",
            LOG_LEVEL: "debug",
          },
        },
        remote: { url: "http://admin:${MCP_PASSWORD}@127.0.0.1:9/mcp?token=literal-query-secret-8&page=2" },
      },
    },
  },
};

function loaded() {
  const dir = writeProject({ config: CONFIG, agents: { main: "m" }, files: { ".env": DOTENV, "lab-agents/main/AGENT.md": "m" } });
  return loadConfig({ env: ENV, cwd: dir });
}

const SECRETS = [
  "gw-override-secret-1",
  "sk-dotenv-secret-2",
  "db-dotenv-secret-3",
  "query-env-secret-4",
  "extra-body-secret-5",
  "odd-env-secret-6",
  "literal-arg-secret-7",
  "literal-query-secret-8",
  "unused-dotenv-secret-9",
  "hello-env-secret-10",
  "mcp-env-secret-11",
  "literal-env-secret-12",
  "literal-bearer-secret",
  "123456:literal-bot-token-13",
  "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.literal-discord-token-14",
  "url-shaped-secret-15",
  "pair-shaped-secret-16",
  "ghp_shapedSecret17abcdefghijklmnopqrstuv",
];

describe("the secrets of a loaded config", () => {
  it("are every value from ${VAR}, secret-named .env entries, the token override and the file's own secrets by their place", () => {
    const { secrets } = loaded();
    for (const secret of SECRETS) expect(secrets, secret).toContain(secret);
    expect(secrets).toContain("ab");
    expect(secrets).toContain("Bearer literal-bearer-secret");
    // Not secrets: a .env entry not named like one, names, modes, titles.
    for (const plain of ["pretty", "fast", "demo", "node", "server.js", "--verbose", "a"]) expect(secrets).not.toContain(plain);
  });

  it("config check masks them by value: none is left anywhere, and what is not secret stays readable", () => {
    const config = loaded();
    const shown = maskSecrets(config.config, config);
    const text = JSON.stringify(shown);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    const gpt = shown.model_list[1]!;
    expect(gpt.api_key).toBe(MASK);
    expect(gpt.api_base).toBe(`https://api.example.com/v1?api-key=${MASK}`);
    expect(gpt.custom_headers).toEqual({ "X-Custom": MASK, Authorization: MASK, "X-Title": "demo" });
    expect(gpt.extra_body).toEqual({ provider: { secret_token: MASK, order: ["a"] }, mode: "fast" });
    const { db, remote } = sectionAt(shown, "tools.mcp").servers;
    expect(db!.args).toEqual(["server.js", `--password=${MASK}`, "--api-key", MASK, "--verbose"]);
    expect(db!.env).toEqual({
      FIXTURE_HELLO: MASK,
      MODE: MASK,
      DB_PASS: MASK,
      DATABASE_URL: `postgres://app:${MASK}@db.internal:5432/app`,
      CONNECTION: `Server=db;User Id=app;Password=${MASK};`,
      GITHUB: MASK,
      LOG_LEVEL: "debug",
    });
    expect(remote!.url).toBe(`http://admin:${MASK}@127.0.0.1:9/mcp?token=${MASK}&page=2`);
    expect(shown.gateway.token).toBe(MASK);
    expect(sectionAt(shown, "channel_list")[0].token).toBe(MASK);
  });

  it("a short value from ${VAR} is masked where it was written, not searched for everywhere", () => {
    const config = loaded();
    const shown = maskSecrets(config.config, config);
    expect(sectionAt(shown, "tools.mcp").servers.db.env.MODE).toBe(MASK);
    expect(shown.agents.dir).toBe("lab-agents");
  });

  it("a config without secrets has none, and is shown as it is", () => {
    const dir = writeProject({ config: { gateway: { port: 0 } } });
    const config = loadConfig({ env: { HOME: "/home/someone" }, cwd: dir });
    expect([...config.secrets]).toEqual([]);
    expect(maskSecrets(config.config, config)).toEqual(config.config);
  });

  it("every header of the trace exporter is a secret whatever its name, and the endpoint's password too: config check masks them", () => {
    const dir = writeProject({
      config: { telemetry: { otlp: { endpoint: "https://user:otlp-url-pass-5@collector.example/v1/traces", headers: { "x-vendor-id": "plain-looking-77" } } } },
    });
    const config = loadConfig({ env: {}, cwd: dir });
    const shown = maskSecrets(config.config, config);
    expect(shown.telemetry.otlp.headers).toEqual({ "x-vendor-id": MASK });
    expect(shown.telemetry.otlp.endpoint).toBe(`https://user:${MASK}@collector.example/v1/traces`);
    expect(shown.telemetry.service_name).toBe("picoclaw");
  });

  it("a trace endpoint that is not an http(s) URL is refused, naming its path", () => {
    const dir = writeProject({ config: { telemetry: { otlp: { endpoint: "grpc://collector:4317" } } } });
    expect(problemsOf(() => loadConfig({ env: {}, cwd: dir })).join("\n")).toMatch(/telemetry\.otlp\.endpoint: must be an http:\/\/ or https:\/\/ URL/);
  });
});
