import { Hono } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { z } from "zod";
import { RequestError } from "../errors.js";
import { type Logger, silentLogger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import { CHAT_ID, agentOfKey } from "../session/key.js";
import { type Timer, realTimer } from "../signals.js";
import { parseReporting, problemsLine } from "../validation.js";
import { bearerAuth } from "./auth.js";
import { chatAnswer, chatStream } from "./chat-stream.js";
import { departureProbe } from "./departures.js";
import { ANSWER_QUEUE_BYTES } from "./sse.js";
import { jsonBodies } from "./content-type.js";
import { errorAnswer, failureOf, isOpenAiPath, retryHeaders } from "./errors.js";
import { type IdempotencyLimits, IdempotencyStore, idempotent } from "./idempotency.js";
import { type ResponseLimits, mountResponses } from "./openai/responses.js";
import { eventsStream } from "./events-route.js";
import { DEFAULT_MAX_STREAMS, StreamSlots } from "./stream-slots.js";
import { decideApproval, listApprovals } from "./approvals-route.js";
import { historyPage } from "./history-route.js";
import { mountPairing } from "./pairing-route.js";
import { hostGuard } from "./host.js";
import { imageSchema } from "./images.js";
import { originGuard } from "./origin.js";
import { type PageFiles, mountPage } from "./page.js";
import { limitBodies } from "./body-limit.js";
import { GatewayMetrics } from "./metrics.js";
import { type GatewayAbout, statusAnswer } from "./status-route.js";
import { mountOpenAi } from "./openai/routes.js";
import { readJson } from "./read-json.js";
import { readiness } from "./ready-route.js";
import { mountFeatureRoutes, sessionKeyParam } from "./routes.js";
import { deleteSession, sessionList } from "./sessions-route.js";
import { type ToolSwitchFile, mountTools } from "./tools-route.js";

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
  /** Times the heartbeats of streamed answers (default: real timers; tests run them out themselves). */
  heartbeatTimer?: Timer;
  /** Idempotency-Key answers kept (gateway.limits.idempotency_keys / idempotency_bytes). */
  idempotency?: IdempotencyLimits;
  /** Stored responses of the Responses API (gateway.limits.responses_kept / responses_bytes). */
  responses?: ResponseLimits;
  /** Session event streams open at once at most (gateway.limits.max_streams; default 500). */
  maxStreams?: number;
  /** Bytes a streamed answer holds that its client has not read (gateway.limits.stream_queue_bytes; default 8 MiB); past it the stream is cut and its turn aborted. */
  streamQueueBytes?: number;
  /** The chat page served at `GET /` (without it, `/` is 404). */
  page?: PageFiles;
  /** Where the tool library's switches are written (the config file); without it `PUT /v1/tools/<name>/state` is refused. */
  configFile?: ToolSwitchFile;
  /** What `GET /v1/status` says of the process (without it, that route is 404). */
  about?: GatewayAbout;
  /** The metrics `GET /metrics` answers (default: a registry of this app's own, listening to the runtime's events). */
  metrics?: GatewayMetrics;
}

/** `POST /v1/chat`'s body: any other field is refused (`400`), so a misspelt one never passes unnoticed. */
const chatBody = z.strictObject({
  message: z.string(),
  session: z.string().regex(CHAT_ID, "expected 1-128 characters: letters, digits and . _ ~ @ + = -").optional(),
  agent: z.string().min(1).optional(),
  /** http(s) or data URLs; checked by the runtime (kind, size, count, the model's vision). */
  images: z.array(imageSchema).optional(),
  stream: z.boolean().optional(),
});

/**
 * The HTTP face of the runtime (README, "HTTP API"). Nothing below the gateway knows
 * about hono; every error leaves as `{"error":{"code","message"}}`.
 */
const DEFAULT_IDEMPOTENCY: IdempotencyLimits = { maxKeys: 1_000, maxBytes: 16_777_216 };
const DEFAULT_RESPONSES: ResponseLimits = { maxResponses: 1_000, maxBytes: 33_554_432 };

export function createApp(runtime: Runtime, opts: AppOptions = {}): Hono {
  // hono's default router compiles every route into one regular expression at the first request: 3-8 ms of the
  // gateway's first answer after start. The trie router takes ~1 ms to set up, and under a microsecond more a match
  // (measured with these 37 routes: 0.9 against 0.07 µs), nothing beside a turn's milliseconds.
  const app = new Hono({ router: new TrieRouter() });
  const logger = opts.logger ?? silentLogger;

  app.onError((error, c) => {
    const failure = failureOf(error, `${c.req.method} ${c.req.path}`, logger);
    // On the OpenAI surface a request the model refused is a 400, which no SDK retries (the AI SDK retries every 5xx, whatever the headers say).
    const status = failure.code === "model_bad_request" && isOpenAiPath(c.req.path) ? 400 : failure.status;
    return errorAnswer(c, status, failure.code, failure.message, retryHeaders(error));
  });
  app.notFound((c) => errorAnswer(c, 404, "not_found", `no route for ${c.req.method} ${c.req.path}`));

  // Who may ask, before anything runs (README, "Security and limits"): every route, /health too.
  const token = opts.token ?? "";
  if (token === "") app.use("*", hostGuard(opts.allowedHosts ?? []));
  app.use("*", originGuard(opts.allowedOrigins ?? []));

  app.get("/health", (c) => c.json({ status: "ok" }));
  app.get("/ready", readiness(runtime, logger));

  // Prometheus text, behind the token as /v1 is (README, "Metrics").
  const metrics = opts.metrics ?? new GatewayMetrics(runtime, logger);
  app.use("*", metrics.countStreams());
  app.use("/metrics", bearerAuth(token));
  app.get("/metrics", (c) => metrics.answer(c));

  // The chat page, outside /v1: it holds no secret and asks for the token itself.
  if (opts.page) mountPage(app, opts.page);

  app.use("/v1/*", bearerAuth(token));
  app.use("/v1/*", jsonBodies());
  app.use("/v1/*", limitBodies(MAX_BODY_BYTES));

  app.get("/v1/agents", (c) => c.json({ agents: runtime.summaries(), default: runtime.defaultAgentId }));

  const about = opts.about;
  if (about) app.get("/v1/status", (c) => statusAnswer(c, runtime, about));

  mountTools(app, runtime, opts.configFile);

  const streams = { timer: opts.heartbeatTimer ?? realTimer, maxQueuedBytes: opts.streamQueueBytes ?? ANSWER_QUEUE_BYTES, logger };

  app.post("/v1/chat", async (c) => {
    const body = parseReporting(chatBody, await readJson(c.req.raw));
    if (!body.success) throw new RequestError("invalid_request", problemsLine(body.error));
    const input = {
      agentId: body.data.agent ?? runtime.defaultAgentId,
      channel: "http",
      chatId: body.data.session ?? "default",
      text: body.data.message,
      ...(body.data.images ? { images: body.data.images } : {}),
    };
    if (body.data.stream) {
      // Refused as JSON before the stream starts (an unknown agent, images its model cannot take), not as an event.
      runtime.checkMessage(input);
      return chatStream(c, runtime, input, streams);
    }
    // While its turn waits for the session's turn before it, a client that went away is found (and its turn let go of).
    const onQueued = departureProbe(c.env);
    return c.json(chatAnswer(await runtime.handleMessage({ ...input, signal: c.req.raw.signal, ...(onQueued ? { onQueued } : {}) })));
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

  app.get("/v1/sessions/:key/approvals", (c) => listApprovals(c, runtime, sessionOf(c.req.param("key"))));

  app.post("/v1/sessions/:key/approvals/:id", (c) => decideApproval(c, runtime, sessionOf(c.req.param("key")), c.req.param("id")));

  mountPairing(app, runtime);

  const eventStreams = new StreamSlots(opts.maxStreams ?? DEFAULT_MAX_STREAMS);
  app.get("/v1/sessions/:key/events", (c) => eventsStream(c, runtime, sessionOf(c.req.param("key")), eventStreams));

  // A client's retry with the same Idempotency-Key gets the first answer, never a second turn.
  const answers = new IdempotencyStore(opts.idempotency ?? DEFAULT_IDEMPOTENCY);
  app.use("/v1/chat/completions", idempotent(answers));
  app.use("/v1/responses", idempotent(answers));
  mountOpenAi(app, runtime, streams);
  mountResponses(app, runtime, opts.responses ?? DEFAULT_RESPONSES, streams);

  mountFeatureRoutes(app, runtime.routes(), { token, maxBodyBytes: MAX_BODY_BYTES });

  return app;
}
