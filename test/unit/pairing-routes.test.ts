/**
 * The pairing routes through hono's app.request, behind the gateway's
 * token: GET /v1/pairing lists codes waiting and paired users; approve lets
 * the code's user in, deny drops the code; an unknown or expired code is a
 * JSON 404; DELETE of a paired user lets them out.
 */
import { describe, expect, it } from "vitest";
import { harness, jsonOf } from "../support/project.js";
import { ManualClock } from "../support/timers.js";

const TOKEN = "gateway-token-for-pairing-tests";
const RULES = { ttlMs: 60 * 60_000, maxPending: 3 };
const auth = { authorization: `Bearer ${TOKEN}` };

function setUp() {
  const clock = new ManualClock(Date.parse("2026-01-02T03:04:05Z"));
  const h = harness({ config: { gateway: { token: TOKEN } }, clock });
  return { h, clock };
}

describe("the pairing routes", () => {
  it("need the gateway's token", async () => {
    const { h } = setUp();
    expect((await h.request("/v1/pairing")).status).toBe(401);
    expect((await h.request("/v1/pairing/ABCD2345/approve", { method: "POST" })).status).toBe(401);
  });

  it("list the codes waiting, approve one (the user is then listed as paired and let in), and 404 a code that is gone", async () => {
    const { h } = setUp();
    const check = await h.runtime.pairings.request("telegram", { id: "1001", name: "@bob" }, RULES);
    if (check.kind !== "pending") throw new Error("expected a code");
    const listed = await jsonOf(await h.request("/v1/pairing", { headers: auth }));
    expect(listed).toEqual({
      pending: [
        {
          code: check.code,
          channel: "telegram",
          user_id: "1001",
          user_name: "@bob",
          requested_at: "2026-01-02T03:04:05.000Z",
          expires_at: "2026-01-02T04:04:05.000Z",
        },
      ],
      paired: [],
    });
    const approved = await h.request(`/v1/pairing/${check.code.toLowerCase()}/approve`, { method: "POST", headers: auth });
    expect(approved.status).toBe(200);
    expect(await jsonOf(approved)).toEqual({ approved: { channel: "telegram", user_id: "1001", user_name: "@bob", approved_at: "2026-01-02T03:04:05.000Z" } });
    expect(await h.runtime.pairings.isApproved("telegram", "1001")).toBe(true);
    expect(await jsonOf(await h.request("/v1/pairing", { headers: auth }))).toMatchObject({ pending: [], paired: [{ user_id: "1001" }] });
    const again = await h.request(`/v1/pairing/${check.code}/approve`, { method: "POST", headers: auth });
    expect(again.status).toBe(404);
    expect(await jsonOf(again)).toEqual({ error: { code: "not_found", message: expect.stringContaining(`no pairing code "${check.code}" waiting`) } });
  });

  it("deny drops the code and lets nobody in; an expired code is 404", async () => {
    const { h, clock } = setUp();
    const first = await h.runtime.pairings.request("telegram", { id: "1001" }, RULES);
    const second = await h.runtime.pairings.request("telegram", { id: "1002" }, RULES);
    if (first.kind !== "pending" || second.kind !== "pending") throw new Error("expected codes");
    const denied = await h.request(`/v1/pairing/${first.code}/deny`, { method: "POST", headers: auth });
    expect(await jsonOf(denied)).toMatchObject({ denied: { code: first.code, user_id: "1001" } });
    expect(await h.runtime.pairings.isApproved("telegram", "1001")).toBe(false);
    expect((await h.request(`/v1/pairing/${first.code}/deny`, { method: "POST", headers: auth })).status).toBe(404);
    clock.advance(60 * 60_000);
    expect((await h.request(`/v1/pairing/${second.code}/approve`, { method: "POST", headers: auth })).status).toBe(404);
    expect(await jsonOf(await h.request("/v1/pairing", { headers: auth }))).toEqual({ pending: [], paired: [] });
  });

  it("revoke lets a paired user out; one not paired is 404", async () => {
    const { h } = setUp();
    const check = await h.runtime.pairings.request("telegram", { id: "1001" }, RULES);
    if (check.kind !== "pending") throw new Error("expected a code");
    await h.runtime.pairings.approve(check.code);
    const revoked = await h.request("/v1/pairing/users/telegram/1001", { method: "DELETE", headers: auth });
    expect(await jsonOf(revoked)).toEqual({ revoked: { channel: "telegram", user_id: "1001" } });
    expect(await h.runtime.pairings.isApproved("telegram", "1001")).toBe(false);
    expect((await h.request("/v1/pairing/users/telegram/1001", { method: "DELETE", headers: auth })).status).toBe(404);
  });
});
