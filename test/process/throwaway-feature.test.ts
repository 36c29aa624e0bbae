/**
 * Adding a feature is one folder and one line: a throwaway feature
 * (test/fixtures/features/guestbook/, written as a built-in is) is added to
 * the list of features the gateway is made of, and each thing it declares
 * works end to end: its config sections (file, environment, errors,
 * masking), its tool (called by a real model over HTTP), its routes (a
 * JSON POST under /v1, a webhook with a raw body outside it) and its
 * section of the system prompt.
 */
import { describe, expect, it } from "vitest";
import { MASK, maskSecrets } from "../../src/config/mask.js";
import { loadConfig } from "../../src/house.js";
import { guestbookFeature } from "../fixtures/features/guestbook/feature.js";
import { harness, jsonOf, openaiConfig, problemsOf, sectionAt, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();
const extensions = { features: [guestbookFeature] };
const AGENT = { main: "---\nname: Main\n---\nYou keep the door." };

function gateway(guestbook: Record<string, unknown> = {}, env: Record<string, string> = { PICOCLAW_TOOLS_SIGN_ENABLED: "true" }, token = "") {
  const config = { ...openaiConfig(model.server.url), gateway: { token }, guestbook: { title: "Front door", hook_secret: "hook-secret-4711", ...guestbook } };
  return harness({ config, agents: AGENT, env, extensions });
}

/** The system message of the model's latest request. */
const systemPrompt = () => (model.server.requests.at(-1)!.body.messages as { role: string; content: string }[])[0]!;

describe("a feature added from one folder", () => {
  it("its config sections: read from the file, its tool switched on by PICOCLAW_TOOLS_SIGN_ENABLED, its secret masked, a bad value named", () => {
    const h = gateway();
    expect(sectionAt(h.loaded.config, "guestbook")).toEqual({ title: "Front door", hook_secret: "hook-secret-4711", max_entries: 100 });
    expect(sectionAt(h.loaded.config, "tools.sign")).toEqual({ enabled: true, max_name_bytes: 64 });
    expect(sectionAt(maskSecrets(h.loaded.config, h.loaded), "guestbook").hook_secret).toBe(MASK);
    const dir = writeProject({ config: { guestbook: { max_entries: 0 }, tools: { sign: { colour: "red" } } } });
    expect(problemsOf(() => loadConfig({ env: { PICOCLAW_TOOLS_SIGN_ENABLED: "maybe" }, cwd: dir, extensions }))).toEqual([
      'PICOCLAW_TOOLS_SIGN_ENABLED: expected true, false, 1 or 0, got "maybe"',
      'tools.sign: unknown key "colour"',
      "guestbook.max_entries: must be >= 1",
    ]);
  });

  it("its tool: offered to the model, called, its result back to the model; off by default until config switches it on", async () => {
    const h = gateway();
    const { json } = await h.chat({ message: `${call("sign", { name: "Ada" })}\nSAY thanks`, session: "s" });
    expect(json.reply).toBe("thanks");
    const offered = (model.server.requests.at(-1)!.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(offered).toContain("sign");
    const tool = (model.server.requests.at(-1)!.body.messages as { role: string; content: string }[]).find((m) => m.role === "tool");
    expect(tool?.content).toBe("signed as number 1");
    const off = gateway({}, {});
    expect((await jsonOf(await off.request("/v1/agents"))).agents[0].tools).not.toContain("sign");
  });

  it("its POST route under /v1: JSON in and out, behind the token, refused without JSON", async () => {
    const h = gateway({}, { PICOCLAW_TOOLS_SIGN_ENABLED: "true" }, "gw-token-123456");
    const post = (body: string, headers: Record<string, string>) => h.request("/v1/guestbook", { method: "POST", body, headers });
    const auth = { authorization: "Bearer gw-token-123456" };
    const signed = await post(JSON.stringify({ name: "Grace" }), { ...auth, "content-type": "application/json" });
    expect(signed.status).toBe(201);
    expect(await signed.json()).toEqual({ signed: 1 });
    expect((await post(JSON.stringify({ name: "Eve" }), { "content-type": "application/json" })).status).toBe(401);
    expect((await post("Eve", { ...auth, "content-type": "text/plain" })).status).toBe(415);
    expect(await jsonOf(await post("{not json", { ...auth, "content-type": "application/json" }))).toMatchObject({ error: { code: "invalid_json" } });
    expect(await jsonOf(await post("{}", { ...auth, "content-type": "application/json" }))).toEqual({
      error: { code: "invalid_request", message: "name: expected a non-empty string" },
    });
    expect(await jsonOf(await h.request("/v1/guestbook", { headers: auth }))).toEqual({ title: "Front door", names: ["Grace"] });
  });

  it("its webhook outside /v1: a raw body of any type, checked by the route's own secret rather than the gateway's token", async () => {
    const h = gateway({}, {}, "gw-token-123456");
    const hook = (secret: string) =>
      h.request("/hooks/guestbook", { method: "POST", body: "Linus\n", headers: { "content-type": "text/plain", "x-guestbook-secret": secret } });
    const ok = await hook("hook-secret-4711");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await ok.text()).toBe("signed as number 1\n");
    expect((await hook("wrong")).status).toBe(404);
    expect(await jsonOf(await h.request("/v1/guestbook", { headers: { authorization: "Bearer gw-token-123456" } }))).toMatchObject({ names: ["Linus"] });
  });

  it("its prompt section: after the AGENT.md body, the same text turn after turn (prompt caching), with the todo plan never in it", async () => {
    const h = harness({
      // The system prompt is compared whole: without the skills list.
      config: { ...openaiConfig(model.server.url), guestbook: { title: "Front door" }, tools: { todo: { enabled: true }, skills: { enabled: false } } },
      agents: AGENT,
      extensions,
    });
    await h.chat({ message: `${call("todo", { action: "write", todos: [{ id: "1", content: "Water the plants" }] })}\nSAY ok`, session: "p" });
    const first = systemPrompt();
    await h.chat({ message: "SAY again", session: "p" });
    const second = systemPrompt();
    expect(first).toEqual({ role: "system", content: 'You keep the door.\n\nThe guestbook "Front door" is open: visitors sign it with the sign tool.' });
    expect(second).toEqual(first);
    expect(second.content).not.toContain("Water the plants");
  });
});
