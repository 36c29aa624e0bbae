import type { Context, Hono } from "hono";
import { nanoid } from "nanoid";
import { RequestError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { MessageObserver } from "../../runtime/streams/message-stream.js";
import type { MessageOutcome } from "../../runtime/options.js";
import type { Runtime } from "../../runtime/runtime.js";
import { joinSignals } from "../../signals.js";
import { departureProbe } from "../departures.js";
import { failureOf } from "../errors.js";
import { openAiErrorBody } from "../errors.js";
import { readJson } from "../read-json.js";
import { SseAnswer, type SseOptions } from "../sse.js";
import { AssistantContent, type CompletionMeta, chunk, completion, finishReason, toolCallsOf, usageOf } from "./completion.js";
import { type CompletionRequest, readCompletionRequest } from "./request.js";
import { OPENAI_CHANNEL } from "./channel.js";
import { quoted } from "../../validation.js";

export { OPENAI_CHANNEL };

/**
 * The OpenAI-compatible API (README, "Use it from OpenAI clients"):
 * `GET /v1/models` lists the agents as models, `POST /v1/chat/completions`
 * runs a message of one, streamed or whole, in OpenAI's shapes. Both sit
 * behind every `/v1` check (token, origin, host, JSON, body size); their
 * errors are in OpenAI's shape.
 */
export function mountOpenAi(app: Hono, runtime: Runtime, streams: SseOptions & { logger: Logger }): void {
  // Models have no dates here: `created` is when the gateway started.
  const created = Math.floor(Date.now() / 1000);
  const model = (id: string) => ({ id, object: "model", created, owned_by: "picoclaw" });

  app.get("/v1/models", (c) => c.json({ object: "list", data: runtime.agentIds().map(model) }));

  app.get("/v1/models/:id", (c) => {
    const id = c.req.param("id");
    if (!runtime.agentIds().includes(id)) throw modelNotFound(id);
    return c.json(model(id));
  });

  app.post("/v1/chat/completions", async (c) => {
    const request = readCompletionRequest(await readJson(c.req.raw), c.req.header("x-session-id"));
    if (!runtime.agentIds().includes(request.agentId)) throw modelNotFound(request.agentId);
    // What would be refused before the turn runs (images the agent's model cannot take) is an error status, streamed or not.
    check(runtime, request);
    const meta: CompletionMeta = { id: `chatcmpl-${nanoid(24)}`, created: Math.floor(Date.now() / 1000), model: request.agentId };
    if (request.stream) return streamed(c, runtime, request, meta, streams);
    const content = new AssistantContent();
    let text = "";
    const outcome = await run(
      runtime,
      request,
      c.req.raw.signal,
      (event) => {
        text += content.add(event);
      },
      // While its turn waits for the session's turn before it, a client that went away is found (and its turn let go of).
      departureProbe(c.env),
    );
    text += content.end(outcome);
    return c.json(completion(meta, text, outcome));
  });
}

export function modelNotFound(id: string): RequestError {
  return new RequestError("model_not_found", `The model ${quoted(id)} does not exist: a model here is an agent id (GET /v1/models lists them)`);
}

/** The message's input: on the session the request names, or a stateless conversation. */
function inputOf(request: CompletionRequest) {
  const { agentId, text, images, conversation, sampling, clientTools, toolResults } = request;
  const message = {
    agentId,
    channel: OPENAI_CHANNEL,
    text,
    ...(images.length > 0 ? { images } : {}),
    ...(sampling ? { sampling } : {}),
    ...(clientTools ? { clientTools } : {}),
    ...(toolResults ? { toolResults } : {}),
  };
  return "session" in conversation
    ? { session: { ...message, chatId: conversation.session } }
    : { conversation: { ...message, history: conversation.history, system: conversation.system } };
}

/** A client tool may not take the name of one of the agent's own: 400 naming it. */
export function refuseToolClash(runtime: Runtime, agentId: string, tools: readonly { name: string }[]): void {
  const own = new Set(runtime.summaries().find((agent) => agent.id === agentId)?.tools ?? []);
  const clash = tools.find((tool) => own.has(tool.name));
  if (clash)
    throw new RequestError("invalid_request", `tools: "${clash.name}" is the name of one of the agent's own tools; give the client's tool another name`);
}

function check(runtime: Runtime, request: CompletionRequest): void {
  refuseToolClash(runtime, request.agentId, request.clientTools ?? []);
  const input = inputOf(request);
  if (input.session) runtime.checkMessage(input.session);
  else runtime.checkConversation(input.conversation);
}

/** The message: on the session the request names, or as a stateless conversation released when it ends. */
function run(
  runtime: Runtime,
  request: CompletionRequest,
  signal: AbortSignal,
  onEvent: MessageObserver,
  onQueued?: (waiting: boolean) => void,
): Promise<MessageOutcome> {
  const input = inputOf(request);
  if (input.session) return runtime.handleMessage({ ...input.session, signal, onEvent, ...(onQueued ? { onQueued } : {}) });
  return runtime.converse({ ...input.conversation, signal, onEvent });
}

/**
 * A streamed completion: a first chunk with the role, a chunk for each piece
 * of content as it comes, a last one with the finish reason, the usage chunk
 * when asked for (`stream_options.include_usage`), then `data: [DONE]`. A
 * failure ends the stream with OpenAI's error object (`data: {"error":...}`)
 * and no `[DONE]`. Comment lines keep a quiet stream alive.
 */
function streamed(c: Context, runtime: Runtime, request: CompletionRequest, meta: CompletionMeta, opts: SseOptions & { logger: Logger }): Response {
  const answer = new SseAnswer(c, opts);
  const signal = joinSignals([c.req.raw.signal, answer.signal]);
  const { includeUsage } = request;
  const data = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
  const piece = (content: string) => {
    if (content !== "") answer.send(data(chunk(meta, { content }, { includeUsage })));
  };
  answer.send(data(chunk(meta, { role: "assistant", content: "" }, { includeUsage })));
  const content = new AssistantContent();
  run(runtime, request, signal.signal, (event) => piece(content.add(event)))
    .then(
      (outcome) => {
        piece(content.end(outcome));
        if (outcome.clientCalls) answer.send(data(chunk(meta, { tool_calls: toolCallsOf(outcome.clientCalls, true) }, { includeUsage })));
        answer.send(data(chunk(meta, {}, { finish: finishReason(outcome), includeUsage })));
        if (includeUsage) answer.send(data(chunk(meta, null, { includeUsage, usage: usageOf(outcome).usage ?? null })));
        answer.end("data: [DONE]\n\n");
      },
      (error: unknown) => {
        const { status, code, message } = failureOf(error, `${c.req.method} ${c.req.path}`, opts.logger);
        answer.end(data(openAiErrorBody(status, code, message)));
      },
    )
    .finally(() => signal.dispose());
  return answer.response();
}
