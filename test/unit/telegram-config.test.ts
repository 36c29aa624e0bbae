/**
 * `channel_list` in the config: strict, every problem named by its JSON
 * path, the token a secret that no output shows.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import { loadConfig } from "../../src/house.js";
import { ConfigError } from "../../src/errors.js";
import { recordingLogger, writeProject } from "../support/project.js";

const TOKEN = "123456:TEST-secret_token-abcdefghij";
const entry = (extra: Record<string, unknown> = {}) => ({ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [1001], ...extra });

function problemsOf(config: unknown, env: Record<string, string> = { TELEGRAM_BOT_TOKEN: TOKEN }): string[] {
  try {
    loadConfig({ env, cwd: writeProject({ config, agents: {} }) });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a ConfigError");
}

async function cli(argv: string[], config: unknown, env: Record<string, string> = { TELEGRAM_BOT_TOKEN: TOKEN }) {
  const out: string[] = [];
  const err: string[] = [];
  const logger = recordingLogger();
  const code = await runCli({ argv, env, cwd: writeProject({ config }), stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger });
  return { code, stdout: out.join("\n"), stderr: err.join("\n"), logs: logger.lines.map((l) => l.message).join("\n") };
}

describe("channel_list", () => {
  it("is empty by default, and an entry gets its defaults", () => {
    expect(loadConfig({ env: {}, cwd: writeProject({ config: {}, agents: {} }) }).config.channel_list).toEqual([]);
    const loaded = loadConfig({ env: { TELEGRAM_BOT_TOKEN: TOKEN }, cwd: writeProject({ config: { channel_list: [entry()] }, agents: {} }) });
    expect(loaded.config.channel_list).toEqual([
      {
        type: "telegram",
        token: TOKEN,
        allow_from: [1001],
        dm_policy: "allowlist",
        pairing_code_ttl_minutes: 60,
        pairing_max_pending: 3,
        streaming: false,
        streaming_interval_ms: 1000,
      },
    ]);
  });

  it("names the JSON path of every problem", () => {
    expect(
      problemsOf({
        channel_list: [
          entry({
            token: "not a token",
            allow_from: [1001, "al ice", true],
            dm_policy: "open",
            pairing_max_pending: 0,
            agent: "Bad Agent",
            streaming_interval_ms: 10,
            api_root: "ftp://x",
            extra: 1,
          }),
          { type: "slack", token: TOKEN, allow_from: [] },
          entry({ allow_from: undefined }),
        ],
      }),
    ).toEqual([
      "channel_list[0].token: expected a bot token from @BotFather (digits, a colon, then letters, digits, _ and -)",
      "channel_list[0].allow_from[1]: expected a Telegram user id (a number) or a username (letters, digits and _, with or without @)",
      "channel_list[0].allow_from[2]: expected a Telegram user id (a number) or a username (letters, digits and _, with or without @)",
      'channel_list[0].dm_policy: expected one of "allowlist", "pairing"',
      "channel_list[0].pairing_max_pending: must be >= 1",
      "channel_list[0].agent: expected an agent id",
      "channel_list[0].streaming_interval_ms: must be >= 500",
      "channel_list[0].api_root: expected an http(s) URL without query, such as https://api.telegram.org",
      'channel_list[0]: unknown key "extra"',
      'channel_list[1].type: expected one of "telegram", "discord"',
      "channel_list[2].allow_from: required (expected array)",
    ]);
  });

  it("gives each channel a name of its own (the type by default), and never the HTTP API's", () => {
    expect(problemsOf({ channel_list: [entry(), entry(), entry({ name: "http" }), entry({ name: "work" })] })).toEqual([
      'channel_list[1].name: "telegram" is taken by channel_list[0] (a name defaults to the type); give each channel its own name',
      `channel_list[2].name: "http" is the HTTP API's channel; give this one a name`,
    ]);
  });

  it("a token whose variable is not set stops start-up naming the path and the variable", () => {
    expect(problemsOf({ channel_list: [entry()] }, {})).toEqual(["channel_list[0].token: environment variable TELEGRAM_BOT_TOKEN is not set"]);
  });

  it("an agent that does not exist stops start-up (exit 2) naming the entry", async () => {
    const { code, stderr } = await cli(["config", "check"], { channel_list: [entry({ agent: "ghost" })] });
    expect(code).toBe(2);
    expect(stderr).toContain('channel_list[0].agent: no agent "ghost" in ');
  });

  it("config check masks the token and shows the rest; no output or log carries the token", async () => {
    const { code, stdout, stderr, logs } = await cli(["config", "check"], { channel_list: [entry({ allow_from: [], streaming: true })] });
    expect(code).toBe(0);
    const shown = JSON.parse(stdout);
    expect(shown.channel_list).toEqual([expect.objectContaining({ type: "telegram", token: "********", allow_from: [], streaming: true })]);
    expect(stderr).toContain('warning: channel_list[0].allow_from is empty: telegram channel "telegram" answers nobody');
    expect(stderr).not.toContain("streaming");
    for (const text of [stdout, stderr, logs]) expect(text).not.toContain(TOKEN);
  });

  it("a token Telegram would never accept is refused without being shown", async () => {
    const { code, stderr } = await cli(["config", "check"], { channel_list: [entry({ token: "secret-without-colon" })] });
    expect(code).toBe(2);
    expect(stderr).toContain("channel_list[0].token: expected a bot token from @BotFather");
    expect(stderr).not.toContain("secret-without-colon");
  });
});
