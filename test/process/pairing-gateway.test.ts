/**
 * Pairing end to end: the real gateway process with a Telegram channel
 * (fake Bot API) and a fake model that counts its requests. An unknown user
 * gets a pairing code and no model call; the real CLI (`picoclaw pairing
 * approve <code>`, a process of its own) approves it through the running
 * gateway's API with its token; the user is told they are in, is answered,
 * and is still let in after a restart. Without a gateway, `picoclaw
 * pairing` works on the store itself.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { APPROVED_TEXT } from "../../src/channels/pairing.js";
import { runCli } from "../../src/cli.js";
import { FakeBotApi } from "../support/fake-telegram.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness, openaiConfig, recordingLogger, writeProject } from "../support/project.js";
import { picoclawProcess } from "../support/cli.js";
import { freePort } from "../support/listen.js";
import { eventually, within } from "../support/wait.js";

const TOKEN = "123456:PAIRPROC-secret_token-xyz";
const GATEWAY_TOKEN = "gateway-token-pairing-process";
const ALICE = { id: 1001, username: "alice" };
const BOB = { id: 2002, username: "bob" };
/** The real picoclaw command. */
const run = (args: string[], cwd: string) => picoclawProcess(args, cwd);

/** `picoclaw pairing ...` as a process: its exit code and what it printed. */
async function cliProcess(args: string[], cwd: string) {
  const cli = run(["pairing", ...args], cwd);
  const code = await within(`picoclaw pairing ${args.join(" ")} to exit`, cli.exited, { instead: cli.output });
  return { code, output: cli.output() };
}

describe("pairing in the real gateway process", () => {
  it("an unknown user gets a code and no model call; picoclaw pairing approve lets them in, across a restart", { timeout: 90_000 }, async () => {
    const api = await FakeBotApi.start(TOKEN);
    onTestFinished(() => api.close());
    const model = await FakeModelServer.start(() => textCompletion("the model's answer"));
    onTestFinished(() => model.close());
    const port = await freePort();
    const project = writeProject({
      config: {
        ...openaiConfig(model.url),
        tools: DEFAULT_TOOLS_OFF,
        gateway: { port, token: "${PICOCLAW_TEST_GATEWAY_TOKEN}" },
        channel_list: [{ type: "telegram", token: TOKEN, allow_from: [ALICE.id], api_root: api.url, dm_policy: "pairing" }],
      },
      files: { ".env": `PICOCLAW_TEST_GATEWAY_TOKEN=${GATEWAY_TOKEN}\n` },
    });
    const gateway = run(["gateway"], project);
    await eventually(() => expect(gateway.output()).toContain('telegram channel \\"telegram\\": polling as @test_bot'));

    api.message("let me in", BOB);
    const reply = await eventually(() => {
      const texts = api.textsIn(BOB.id);
      expect(texts).toHaveLength(1);
      return texts[0]!;
    });
    const code = /Pairing code: ([A-Z2-9]{8})/.exec(reply)![1]!;
    expect(reply).toContain("Your Telegram user id: 2002");
    expect(reply).toContain(`picoclaw pairing approve ${code}`);
    expect(model.requests).toHaveLength(0);

    const listed = await cliProcess(["list"], project);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toMatch(new RegExp(`${code}\\s+telegram\\s+2002 \\(@bob\\)`));

    const approved = await cliProcess(["approve", code], project);
    expect(approved.code, approved.output).toBe(0);
    expect(approved.output).toContain("Approved: user 2002 (@bob) of channel telegram is let in.");
    await eventually(() => expect(api.textsIn(BOB.id).at(-1)).toBe(APPROVED_TEXT));
    api.message("hello now", BOB);
    await eventually(() => expect(api.textsIn(BOB.id).at(-1)).toBe("the model's answer"));
    expect(model.requests).toHaveLength(1);
    // An unknown code is said to be unknown, with exit 1.
    const unknown = await cliProcess(["deny", code], project);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain(`no pairing code "${code}" waiting`);

    gateway.child.kill("SIGTERM");
    expect(await within("the gateway to exit", gateway.exited, { instead: gateway.output })).toBe(0);
    expect(gateway.output()).not.toContain(TOKEN);
    expect(gateway.output()).not.toContain(GATEWAY_TOKEN);
    expect(gateway.output()).not.toContain("let me in");

    // Paired users are kept in the session folder: after a restart Bob is still let in.
    const again = run(["gateway"], project);
    await eventually(() => expect(again.output()).toContain("polling as @test_bot"));
    api.message("still me", BOB);
    await eventually(() => expect(api.textsIn(BOB.id)).toHaveLength(4));
    expect(api.textsIn(BOB.id).at(-1)).toBe("the model's answer");
    expect(model.requests).toHaveLength(2);
    again.child.kill("SIGTERM");
    expect(await within("the gateway to exit", again.exited, { instead: again.output })).toBe(0);
  });
});

/** `picoclaw` in-process in `cwd`: exit code and what it printed. */
async function cliRun(argv: string[], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({ argv, env: {}, cwd, stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger: recordingLogger() });
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("picoclaw pairing, with no gateway running: in the store itself", () => {
  it("lists, approves, denies and revokes; an unknown code is exit 1, a missing one a usage error", async () => {
    // Nothing listens on a port just freed: the command opens the session folder itself.
    const port = await freePort();
    const codes = ["AAAA2345", "BBBB2345"];
    const h = harness({ config: { gateway: { port } }, pairingCodes: () => codes.shift()! });
    const rules = { ttlMs: 60 * 60_000, maxPending: 3 };
    await h.runtime.pairings.request("telegram", { id: "2002", name: "@bob" }, rules);
    await h.runtime.pairings.request("telegram", { id: "3003" }, rules);
    // The session folder is one process's at a time.
    await h.runtime.close(0);

    const listed = await cliRun(["pairing", "list"], h.dir);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n")[0]).toMatch(/^CODE\s+CHANNEL\s+USER\s+EXPIRES$/);
    expect(listed.stdout).toMatch(/AAAA2345\s+telegram\s+2002 \(@bob\)\s+\d{4}-/);
    expect(listed.stdout).toContain("No paired users.");
    expect((await cliRun(["pairing", "approve", "aaaa2345"], h.dir)).stdout).toBe("Approved: user 2002 (@bob) of channel telegram is let in.");
    expect((await cliRun(["pairing", "deny", "BBBB2345"], h.dir)).stdout).toBe("Denied: code BBBB2345 of user 3003 (channel telegram) is dropped.");
    const unknown = await cliRun(["pairing", "approve", "BBBB2345"], h.dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no pairing code "BBBB2345" waiting');
    const after = await cliRun(["pairing", "list"], h.dir);
    expect(after.stdout).toContain("No pairing codes waiting.");
    expect(after.stdout).toMatch(/telegram\s+2002 \(@bob\)/);
    expect((await cliRun(["pairing", "revoke", "telegram", "2002"], h.dir)).code).toBe(0);
    expect((await cliRun(["pairing", "revoke", "telegram", "2002"], h.dir)).code).toBe(1);
    const usage = await cliRun(["pairing", "approve"], h.dir);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("pairing approve needs the code");
    expect((await cliRun(["pairing", "nope"], h.dir)).code).toBe(2);
  });
});
