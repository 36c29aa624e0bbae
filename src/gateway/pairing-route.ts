import type { Context, Hono } from "hono";
import { RequestError } from "../errors.js";
import type { PairedUser, PendingPairing } from "../port/pairings.js";
import type { Runtime } from "../runtime/runtime.js";

export const pendingJson = (p: PendingPairing) => ({
  code: p.code,
  channel: p.channel,
  user_id: p.userId,
  ...(p.userName ? { user_name: p.userName } : {}),
  requested_at: new Date(p.requestedAt).toISOString(),
  expires_at: new Date(p.expiresAt).toISOString(),
});

export const pairedJson = (u: PairedUser) => ({
  channel: u.channel,
  user_id: u.userId,
  ...(u.userName ? { user_name: u.userName } : {}),
  approved_at: new Date(u.approvedAt).toISOString(),
});

const unknownCode = (code: string) =>
  new RequestError("not_found", `there is no pairing code ${JSON.stringify(code)} waiting (it may have expired: the user gets a new one by writing again)`);

/**
 * The pairing routes, behind the token like all of /v1 (README, "Pairing"):
 * `GET /v1/pairing` lists the codes waiting and the users let in;
 * `POST /v1/pairing/<code>/approve` lets the code's user in, `.../deny`
 * drops the code; an unknown or expired code is 404.
 */
export function mountPairing(app: Hono, runtime: Runtime): void {
  app.get("/v1/pairing", async (c: Context) =>
    c.json({ pending: (await runtime.pairings.pending()).map(pendingJson), paired: (await runtime.pairings.paired()).map(pairedJson) }),
  );
  app.post("/v1/pairing/:code/approve", async (c: Context) => {
    const code = c.req.param("code") ?? "";
    const user = await runtime.pairings.approve(code);
    if (!user) throw unknownCode(code);
    return c.json({ approved: pairedJson(user) });
  });
  app.post("/v1/pairing/:code/deny", async (c: Context) => {
    const code = c.req.param("code") ?? "";
    const pending = await runtime.pairings.deny(code);
    if (!pending) throw unknownCode(code);
    return c.json({ denied: pendingJson(pending) });
  });
  app.delete("/v1/pairing/users/:channel/:user", async (c: Context) => {
    const channel = c.req.param("channel") ?? "";
    const user = c.req.param("user") ?? "";
    if (!(await runtime.pairings.revoke(channel, user))) {
      throw new RequestError("not_found", `channel ${JSON.stringify(channel)} has no paired user ${JSON.stringify(user)}`);
    }
    return c.json({ revoked: { channel, user_id: user } });
  });
}
