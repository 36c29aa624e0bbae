import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BOT_ID, type DiscordUser, FakeDiscord } from "../support/fake-discord.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

/**
 * The real gateway process (`node dist/main.js gateway`) with a Discord
 * channel pointed at the fake Discord, and a fake model server that counts
 * its calls: DMs and mentions answered, the rest not (and no model call
 * for them), a long answer in pieces, a 429 waited out, `/clear`, and the
 * gateway connection closed on SIGTERM.
 */

const root = path.resolve(import.meta.dirname, "..", "..");
const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.process-secret-discord-token_987654";
const ALICE: DiscordUser = { id: "100000000000000001", username: "alice" };
const MALLORY: DiscordUser = { id: "666000000000000666", username: "mallory" };
const BOT: DiscordUser = { id: BOT_ID, username: "test_bot", bot: true };
const DM = "300000000000000003";
const GENERAL = "400000000000000004";

const CODE = Array.from({ length: 80 }, (_, i) => `print("line ${String(i).padStart(2, "0")} ${"=".repeat(20)}")`);
const LONG = ["The script:", "```python", ...CODE, "```", "The end."].join("\n");

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

describe("the real gateway process with a Discord channel", () => {
  it("answers DMs and mentions, not the rest; splits a long answer; waits out a 429; /clear; closes the gateway connection on SIGTERM", {
    timeout: 90_000,
  }, async () => {
    const discord = await FakeDiscord.start(TOKEN);
    onTestFinished(() => discord.close());
    const model = await FakeModelServer.start((request) => {
      const last = request.body.messages.filter((m: { role: string }) => m.role === "user").at(-1)?.content;
      const text = typeof last === "string" ? last : JSON.stringify(last);
      return textCompletion(text.includes("long please") ? LONG : `echo: ${text}`);
    });
    onTestFinished(() => model.close());
    // The first message the bot sends is answered 429 with Retry-After: the bot waits and sends it again.
    discord.rateLimitNext("POST", /^\/channels\/\d+\/messages$/, 0.3);
    const project = writeProject({
      config: {
        ...openaiConfig(model.url),
        channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot }],
      },
      files: { ".env": `DISCORD_BOT_TOKEN=${TOKEN}\n` },
    });
    const { DISCORD_BOT_TOKEN: _, ...env } = process.env;
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
      cwd: project,
      env: { ...env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const exited = exitOf(child);
    let connection: Awaited<ReturnType<FakeDiscord["identified"]>>;
    try {
      await eventually(() => expect(output).toContain("listening on http://127.0.0.1:"));
      connection = await discord.identified();
      await eventually(() => expect(output).toContain('discord channel \\"discord\\": connected to the gateway as @test_bot'));

      // A DM, its first answer rate-limited once.
      discord.message("hello from the process test", ALICE, { channelId: DM });
      await eventually(() => expect(discord.textsIn(DM)).toEqual(["echo: hello from the process test"]));
      expect(discord.callsTo("POST", /^\/channels\/\d+\/messages$/).map((c) => c.status)).toEqual([429, 200]);
      expect(model.requests).toHaveLength(1);

      // In a server's channel: no mention, nothing; a stranger's mention, nothing; Alice's mention, an answer.
      discord.message("chatter among people", ALICE, { channelId: GENERAL, guild: true });
      discord.message(`<@${BOT_ID}> tell me secrets`, MALLORY, { channelId: GENERAL, guild: true, mentions: [BOT] });
      discord.message(`<@${BOT_ID}> hi bot`, ALICE, { channelId: GENERAL, guild: true, mentions: [BOT] });
      await eventually(() => expect(discord.textsIn(GENERAL)).toEqual(["echo: hi bot"]));
      expect(model.requests).toHaveLength(2);
      expect(output).toContain(`ignored a message from user ${MALLORY.id} (@mallory) in channel ${GENERAL}: not in channel_list[0].allow_from`);
      expect(output).not.toContain("tell me secrets");

      // A long answer: pieces under 2,000 characters, the code block closed and opened again.
      discord.message("long please", ALICE, { channelId: DM });
      await eventually(() => expect(discord.textsIn(DM).at(-1)).toMatch(/The end\.$/));
      const pieces = discord.textsIn(DM).slice(1);
      expect(pieces.length).toBeGreaterThanOrEqual(2);
      for (const piece of pieces) {
        expect(piece.length).toBeLessThanOrEqual(2000);
        expect((piece.match(/^```/gm) ?? []).length % 2).toBe(0);
      }
      expect(pieces[1]).toMatch(/^```python\n/);
      for (const line of CODE) expect(pieces.join("\n")).toContain(line);

      // /clear is the runtime's command: no model call.
      discord.message("/clear", ALICE, { channelId: DM });
      await eventually(() => expect(discord.textsIn(DM).at(-1)).toBe("Cleared: this session's history, plan and undelivered messages are gone."));
      expect(model.requests).toHaveLength(3);
      discord.message("after clearing", ALICE, { channelId: DM });
      await eventually(() => expect(discord.textsIn(DM).at(-1)).toBe("echo: after clearing"));
      // The model saw a fresh conversation: the system prompt and this message only.
      expect(model.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role !== "system")).toHaveLength(1);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await within("the gateway to exit on SIGTERM", exited), output).toBe(0);
    expect(output).toContain("SIGTERM: stopping");
    expect(connection!.closeCode).toBe(1000);
    expect(output).not.toContain(TOKEN);
    const count = discord.calls.length;
    await discord.disconnected();
    expect(discord.calls.length).toBe(count);
  });
});
