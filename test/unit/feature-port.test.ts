/**
 * The feature port, used as an embedder would: a feature the runtime has
 * never heard of contributes a tool, a slash command, per-session state, a
 * frontmatter key, an HTTP route and an event type of its own, and each one
 * reaches the outside the way the built-in features' do.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Feature, FeatureHost, SessionItem } from "../../src/port/feature.js";
import { SessionState } from "../../src/session/state.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { harness, jsonOf } from "../support/project.js";

declare module "../../src/port/events.js" {
  interface RuntimeEvents {
    "tally.changed": EventScope & { count: number };
  }
}

/** A tally per agent and session: `tally` adds one, `/tally` shows it, a route reads it. */
function tallyFeature(): Feature & { counts: SessionState<number> } {
  const counts = new SessionState<number>();
  return {
    name: "tally",
    counts,
    needs: ["agent", "events"],
    frontmatter: { tally_step: z.int().min(1) },
    setup(host) {
      const step = (agentId: string) => (host.agent(agentId).settings.tally_step as number | undefined) ?? 1;
      return {
        tools: [
          defineTool({
            name: "tally",
            description: "Adds to this conversation's tally.",
            parameters: z.object({}),
            enabledByDefault: true,
            execute: (_args, ctx) => {
              const count = (counts.get(ctx.agentId, ctx.sessionKey) ?? 0) + step(ctx.agentId);
              counts.set(ctx.agentId, ctx.sessionKey, count);
              host.events.emit("tally.changed", { agentId: ctx.agentId, sessionKey: ctx.sessionKey, count });
              return toolResult.silent(`tally is ${count}`);
            },
          }),
        ],
        commands: [
          {
            name: "tally",
            usage: "/tally",
            description: "show the tally",
            locked: true,
            run: (ctx) => `Tally: ${counts.get(ctx.agentId, ctx.sessionKey) ?? 0}`,
          },
        ],
        sessionState: [counts],
        routes: [{ method: "GET", path: "/v1/sessions/:key/tally", handle: ({ params }) => ({ json: { count: counts.get("main", params.key!) ?? 0 } }) }],
      };
    },
  };
}

const AGENTS = { main: "---\nname: Main\ntally_step: 2\n---\nCount.", plain: "---\nname: Plain\n---\nCount." };

describe("the feature port", () => {
  it("a feature's tool, command, route, frontmatter key and event type all reach the outside", async () => {
    const tally = tallyFeature();
    const h = harness({ agents: AGENTS, features: [tally] });
    const seen: number[] = [];
    h.runtime.on("tally.changed", (e) => seen.push(e.count));

    const { json } = await h.chat({ message: "CALL tally {}\nCALL tally {}", session: "s" });
    expect(json.reply).toContain("tally is 4");
    expect(seen).toEqual([2, 4]);
    expect((await h.chat({ message: "/tally", session: "s" })).json.reply).toBe("Tally: 4");
    expect(await jsonOf(await h.request("/v1/sessions/agent:main:http:s/tally"))).toEqual({ count: 4 });
    expect((await h.request("/v1/sessions/not-a-key/tally")).status).toBe(400);
    expect((await h.chat({ message: "/help" })).json.reply).toContain("/tally — show the tally");
    expect((await jsonOf(await h.request("/v1/agents"))).agents.find((a: { id: string }) => a.id === "plain").tools).toContain("tally");
  });

  it("its per-session state goes with /clear and with a finished sub-turn", async () => {
    const tally = tallyFeature();
    const h = harness({ agents: AGENTS, features: [tally] });
    await h.chat({ message: "CALL tally {}", session: "s" });
    await h.chat({ message: 'CALL subagent {"task":"CALL tally {}"}', session: "s" });
    expect(tally.counts.size).toBe(1);
    await h.chat({ message: "/clear", session: "s" });
    expect(tally.counts.size).toBe(0);
  });

  it("a tool name another feature already has stops start-up, naming both", () => {
    const clash: Feature = {
      name: "clash",
      setup: () => ({ tools: [defineTool({ name: "todo", description: "Mine.", parameters: z.object({}), execute: () => toolResult.text("x") })] }),
    };
    expect(() => harness({ features: [clash] })).toThrow('tool "todo" from feature "clash" clashes with the tool of that name from the built-in tools');
  });

  it("a feature may not take the name of the runtime's own durable state (approvals wait there)", () => {
    const squatter: Feature = { name: "approvals", setup: () => ({}) };
    expect(() => harness({ features: [squatter] })).toThrow(`a feature may not be named "approvals": the runtime's own durable state has that name`);
  });

  it("a route under /v1 takes JSON behind the token only: a raw body or its own auth there stops the gateway being made, naming the route", () => {
    const routed = (route: object): Feature => ({
      name: "routed",
      setup: () => ({ routes: [{ method: "POST", handle: () => ({ json: {} }), ...route }] as never }),
    });
    expect(() => harness({ features: [routed({ path: "/v1/hook", body: "raw" })] })).toThrow(
      "feature route POST /v1/hook: a route under /v1/ takes JSON bodies only; put a raw-body route elsewhere (such as /hooks/<name>)",
    );
    expect(() => harness({ features: [routed({ path: "/v1/hook", auth: "none" })] })).toThrow(
      "feature route POST /v1/hook: every route under /v1/ is behind the gateway's token; put a route that checks its own caller elsewhere",
    );
    expect(() => harness({ features: [routed({ path: "hook" })] })).toThrow("feature route POST hook: its path must start with /");
  });

  it("a feature can take input from outside like a chat channel: started with the gateway, messages in, deliveries out, stopped first", async () => {
    const order: string[] = [];
    let host!: FeatureHost;
    const seen: SessionItem[] = [];
    const inbox: Feature = {
      name: "inbox",
      needs: ["subscribe", "handleMessage"],
      setup(h) {
        host = h;
        return {
          start: () => void order.push("start"),
          stop: () => void order.push("stop"),
          close: () => void order.push("close"),
        };
      },
    };
    const broken: Feature = { name: 'broken channel "x"', setup: () => ({ start: () => Promise.reject(new Error("no network")) }) };
    const h = harness({ features: [inbox, broken] });
    expect(await h.runtime.start()).toEqual(['broken channel "x" did not start: no network']);
    expect(await h.runtime.start()).toEqual([]);
    const unsubscribe = host.subscribe("agent:main:inbox:c1", (item) => seen.push(item));
    const outcome = await host.handleMessage({ agentId: "main", channel: "inbox", chatId: "c1", text: "hello" });
    expect(outcome.sessionKey).toBe("agent:main:inbox:c1");
    const turn = { agent: "main", session_key: "agent:main:inbox:c1" };
    expect(seen).toEqual([
      { type: "notice", event: "turn.start", data: turn },
      { type: "delivery", ...outcome.delivered[0]! },
      { type: "notice", event: "turn.end", data: { ...turn, outcome: "done" } },
    ]);
    unsubscribe();
    h.runtime.on("turn.end", () => order.push("turn.end"));
    const running = host.handleMessage({ agentId: "main", channel: "inbox", chatId: "c1", text: "again" });
    await h.runtime.close();
    await running;
    expect(order).toEqual(["start", "stop", "turn.end", "close"]);
  });
});
