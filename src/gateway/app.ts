import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { PicoclawError, RequestError, messageOf } from "../errors.js";
import { type Logger, silentLogger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import { CHAT_ID, agentOfKey } from "../session/key.js";
import { describeIssues } from "../validation.js";
import { bearerAuth } from "./auth.js";
import { jsonBodies } from "./content-type.js";
import { errorBody, statusOf } from "./errors.js";
import { eventsStream } from "./events-route.js";
import { historyPage } from "./history-route.js";
import { hostGuard } from "./host.js";
import { imageSchema } from "./images.js";
import { originGuard } from "./origin.js";
import { refuse } from "./refusal.js";
import { mountFeatureRoutes, sessionKeyParam } from "./routes.js";
import { deleteSession, sessionList } from "./sessions-route.js";

export const MAX_BODY_BYTES = 1024 * 1024;

export interface AppOptions {
  /** When non-empty, every /v1/* route needs `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Origins (`https://app.example.com`) whose web pages may call the API: they
   * get CORS headers. A request with any other Origin but the gateway's own is refused.
   */
  allowedOrigins?: readonly string[];
  /**
   * Hosts (`myhost.lan`, `myhost.lan:18790`) answered while no token is set,
   * besides `localhost`, 127.x.y.z and `[::1]`. With a token any Host is answered.
   */
  allowedHosts?: readonly string[];
  /** Where failed requests are logged (never with a body). */
  logger?: Logger;
}

const chatBody = z.object({
  message: z.string(),
  session: z.string().regex(CHAT_ID, "expected 1-128 characters: letters, digits and . _ ~ @ + = -").optional(),
  agent: z.string().min(1).optional(),
  /** http(s) or data URLs; checked by the runtime (kind, size, count, the model's vision). */
  images: z.array(imageSchema).optional(),
});

/**
 * The HTTP face of the runtime (README, "HTTP API"). Nothing below the gateway knows
 * about hono; every error leaves as `{"error":{"code","message"}}`.
 */
export function createApp(runtime: Runtime, opts: AppOptions = {}): Hono {
  const app = new Hono();
  const logger = opts.logger ?? silentLogger;

  app.onError((error, c) => {
    if (error instanceof PicoclawError) {
      const status = statusOf(error.code);
      if (status >= 500) logger.warn(`${c.req.method} ${c.req.path}: ${error.message}`, { code: error.code });
      return c.json(errorBody(error.code, error.message), status);
    }
    logger.error(`${c.req.method} ${c.req.path} failed: ${messageOf(error)}`);
    return c.json(errorBody("internal", "internal error; see the gateway log"), 500);
  });
  app.notFound((c) => c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404));

  // Who may ask, before anything runs (README, "Security and limits"): every route, /health too.
  const token = opts.token ?? "";
  if (token === "") app.use("*", hostGuard(opts.allowedHosts ?? []));
  app.use("*", originGuard(opts.allowedOrigins ?? []));

  app.get("/health", (c) => c.json({ status: "ok" }));

  app.use("/v1/*", bearerAuth(token));
  app.use("/v1/*", jsonBodies());
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => refuse(c, 413, "payload_too_large", `the body is over ${MAX_BODY_BYTES} bytes`),
    }),
  );

  app.get("/v1/agents", (c) => c.json({ agents: runtime.summaries() }));

  app.post("/v1/chat", async (c) => {
    const body = chatBody.safeParse(await readJson(c.req.raw), { reportInput: true });
    if (!body.success) throw new RequestError("invalid_request", describeIssues(body.error).join("; "));
    const outcome = await runtime.handleMessage({
      agentId: body.data.agent ?? runtime.defaultAgentId,
      channel: "http",
      chatId: body.data.session ?? "default",
      text: body.data.message,
      ...(body.data.images ? { images: body.data.images } : {}),
      signal: c.req.raw.signal,
    });
    return c.json({
      agent: outcome.agentId,
      session_key: outcome.sessionKey,
      reply: outcome.reply,
      // What reached the session while nobody was watching comes first, once (never after /clear).
      delivered: [...outcome.earlier, ...outcome.delivered],
      // A turn /stop ended is answered, not failed: clients retry 5xx and 409, which would run it again.
      ...(outcome.stopped ? { stopped: true } : {}),
    });
  });

  /** A session key from the URL whose agent exists: 400 `invalid_session_key`, else 404 `agent_not_found`. */
  const sessionOf = (raw: string): string => {
    const key = sessionKeyParam(raw);
    runtime.agent(agentOfKey(key)!);
    return key;
  };

  app.get("/v1/sessions", (c) => sessionList(c, runtime));

  app.delete("/v1/sessions/:key", (c) => deleteSession(c, runtime, sessionOf(c.req.param("key"))));

  app.get("/v1/sessions/:key/history", (c) => historyPage(c, runtime, sessionOf(c.req.param("key"))));

  app.get("/v1/sessions/:key/events", (c) => eventsStream(c, runtime, sessionOf(c.req.param("key"))));

  mountFeatureRoutes(app, runtime.routes());

  return app;
}

async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") throw new RequestError("invalid_json", "the body is empty; expected a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RequestError("invalid_json", `the body is not valid JSON: ${messageOf(error)}`);
  }
}
