import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { FakeBotApi } from "../support/fake-telegram.js";
import { writeProject } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const TOKEN = "123456:PROCESS-secret_token-xyz";
const ALICE = { id: 1001, username: "alice" };

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

describe("the real gateway process with a Telegram channel", () => {
  it("answers a chat message once it listens, and stops polling and exits 0 on SIGTERM", { timeout: 60_000 }, async () => {
    const api = await FakeBotApi.start(TOKEN);
    onTestFinished(() => api.close());
    const project = writeProject({
      config: { channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url }] },
      files: { ".env": `TELEGRAM_BOT_TOKEN=${TOKEN}\n` },
    });
    // The token comes from the project's .env, as README's set-up says.
    const { TELEGRAM_BOT_TOKEN: _, ...env } = process.env;
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
      cwd: project,
      env: { ...env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const exited = exitOf(child);
    try {
      await eventually(() => expect(output).toContain("listening on http://127.0.0.1:"));
      await eventually(() => expect(output).toContain('telegram channel \\"telegram\\": polling as @test_bot'));
      api.message("hello from the process test", ALICE);
      await eventually(() => expect(api.textsIn(ALICE.id)).toEqual([expect.stringMatching(/^You said: hello from the process test/)]));
      // The update is taken, and the next long poll is under way.
      await eventually(() => expect(api.callsOf("getUpdates").at(-1)!.payload.offset).toBe(2));
    } finally {
      child.kill("SIGTERM");
    }
    expect(await within("the gateway to exit on SIGTERM", exited), output).toBe(0);
    expect(output).toContain("SIGTERM: stopping");
    expect(output).not.toContain(TOKEN);
    const polls = api.callsOf("getUpdates");
    expect(polls.at(-1)!.payload).toMatchObject({ limit: 1, timeout: 0 });
    // The process is gone; once its connections have closed at the fake API, every request it sent has been read.
    const count = api.calls.length;
    await api.disconnected();
    expect(api.calls.length).toBe(count);
  });
});
