import type { AgentDefinition } from "../../agents/agent.js";
import type { EventBus } from "../../port/events.js";
import type { Delivery } from "../../port/feature.js";
import type { DeliveryOrigin } from "../../port/events.js";
import { TurnTimeoutError } from "../../errors.js";
import { type ChatMessage, type ContentPart, forModel, isRecord, modelView, withoutThinking } from "../../models/message.js";
import type { ModelDelta, ModelProvider, Sampling } from "../../models/provider.js";
import { RequestMemo } from "../../models/request-memo.js";
import type { ToolCall, ToolSpec } from "../../models/message.js";
import type { HistoryStore } from "../../session/history.js";
import { type Timer, joinSignals } from "../../signals.js";
import type { ApprovalGate } from "../../tools/approval.js";
import type { CallObserver, CallScope, ToolSet } from "../../tools/tool-set.js";
import type { ImageInput } from "./images.js";
import { type TokenUsage, UsageSum } from "./usage.js";
import { OutputBudget } from "./output-budget.js";

export interface TurnInput {
  turnId: string;
  agent: AgentDefinition;
  /** The system prompt: the agent's, with the features' sections (system-prompt.ts), made under the turn's signal (its deadline counts). */
  system: (signal: AbortSignal) => Promise<string>;
  sessionKey: string;
  text: string;
  /** Images sent with the message (checked by the runtime before the turn). */
  images?: readonly ImageInput[];
  signal: AbortSignal;
  provider: ModelProvider;
  tools: ToolSet;
  maxIterations: number;
  /** Bytes of tool output the turn shows the user at most (agents.defaults.max_turn_output_bytes); the model still gets every result. */
  maxOutputBytes?: number;
  /** The turn's deadline (agents.defaults.turn_timeout_ms), timed by `timer`. */
  timeoutMs: number;
  timer: Timer;
  history: HistoryStore;
  events: EventBus;
  /** What the user sees, with the turn (and tool call) it came from. */
  deliver: (delivery: Delivery, origin: DeliveryOrigin) => void;
  now: () => number;
  /** Asks a person before calls of tools under approval `ask` run. */
  gate?: ApprovalGate;
  /** What the client asked of the model's answers (sampling, structure), over the entry's settings. */
  sampling?: Sampling;
  /** Someone follows the turn as it streams (ModelRequest.watched). */
  watched?: boolean;
  /**
   * The client's own tools (the OpenAI-compatible route), offered beside the
   * agent's: a call of one ends the turn, handed to the client to run.
   */
  clientTools?: readonly ToolSpec[];
  /** The client's results of those calls: the turn goes on from them instead of from a new user message. */
  toolResults?: readonly { toolCallId: string; content: string }[];
  /** A system note for this turn only (not kept in history), just before the new message. */
  note?: string;
  /** The JSON of the session's last model call (RequestMemos), when the runtime kept it: this turn's calls start from it. */
  memo?: RequestMemo;
}

export interface TurnResult {
  reply: string;
  /** True when max_tool_iterations stopped the work. */
  hitLimit: boolean;
  /** True when the model ran out of output room (max_tokens) and the reply says so. */
  cutOff: boolean;
  /** Tokens of the turn's own model calls, summed, when the provider reported any. */
  usage?: TokenUsage;
  /** Calls of the client's tools the turn ended with: the client runs them and sends their results. */
  clientCalls?: ToolCall[];
}

export const CUT_OFF_NOTE = "[The answer was cut off: the model reached its output limit (max_tokens).]";

export function limitReply(max: number): string {
  return (
    `I stopped because this turn reached the limit of ${max} tool iteration${max === 1 ? "" : "s"} ` +
    '(agents.defaults.max_tool_iterations) before the work was finished. Say "continue" and I will pick it up from here.'
  );
}

/**
 * One turn: system prompt + history + the new message → model → tools →
 * results → model ... until the model answers with text or the iteration
 * limit is reached. The session's history changes only when the turn ends
 * well (one append, durable before the reply is delivered): a failed or
 * aborted turn leaves it exactly as it was (but for a summary that context
 * fitting wrote with agents.defaults.summarize on, which stays). Past its
 * deadline the turn is aborted like any other, with a TurnTimeoutError.
 */
export async function runTurn(input: TurnInput): Promise<TurnResult> {
  const joined = joinSignals([input.signal]);
  const cancel = input.timer(input.timeoutMs, () => joined.abort(new TurnTimeoutError(input.timeoutMs)));
  try {
    return await loop({ ...input, signal: joined.signal });
  } finally {
    cancel();
    joined.dispose();
  }
}

async function loop(input: TurnInput): Promise<TurnResult> {
  const { agent, sessionKey, signal, provider, tools, events } = input;
  const scope = { agentId: agent.id, sessionKey, turnId: input.turnId };
  const system = await input.system(signal);
  const prefix: ChatMessage[] = system ? [{ role: "system", content: system }] : [];
  // Records for people (who allowed a call) stay in the history and out of the model's sight.
  const history = (await input.history.get(sessionKey)).filter((message) => !isRecord(message));
  if (input.note !== undefined) history.push({ role: "system", content: input.note });
  // A turn goes on from the client's tool results, or starts with the user's message.
  const added: ChatMessage[] = input.toolResults?.length
    ? input.toolResults.map((r): ChatMessage => ({ role: "tool", tool_call_id: r.toolCallId, content: r.content }))
    : [{ role: "user", content: userContent(input.text, input.images ?? []) }];
  // Calls the last answer left to the client that got no result (it sent something else): each gets one, so the conversation stays whole.
  const answered = new Set(added.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
  const missing = unansweredCalls(history).filter((id) => !answered.has(id));
  if (missing.length > 0) added.unshift(...missing.map((id): ChatMessage => ({ role: "tool", tool_call_id: id, content: NO_CLIENT_RESULT, is_error: true })));
  const clientNames = new Set((input.clientTools ?? []).map((t) => t.name));
  const specs = clientNames.size > 0 ? [...tools.specs(), ...input.clientTools!] : tools.specs();
  // What this turn shows the user of its tools' results, bounded (agents.defaults.max_turn_output_bytes).
  const shown = new OutputBudget(input.maxOutputBytes ?? Number.POSITIVE_INFINITY, input.turnId, input.deliver);
  const toolContext: CallScope = {
    agentId: agent.id,
    sessionKey,
    turnId: input.turnId,
    signal,
    observer: toolEvents(events, scope, (text) => shown.fits(text)),
    ...(input.gate ? { gate: input.gate } : {}),
  };
  const usage = new UsageSum();
  // The model's text is shown as it streams (`text.delta`); what the reply adds after it (a note) follows it.
  let streamed = 0;
  let firstDelta: number | undefined;
  const onDelta = (delta: ModelDelta) => {
    firstDelta ??= input.now();
    if (delta.type !== "text" || delta.text === "") return;
    streamed += delta.text.length;
    events.emit("text.delta", { ...scope, text: delta.text });
  };
  const showRest = (reply: string, seen: string) => {
    const shown = reply.startsWith(seen) ? seen : seen.trimStart();
    if (reply.length > shown.length) events.emit("text.delta", { ...scope, text: reply.slice(shown.length) });
  };

  // The prompt and the history are the same for every call of the turn: made ready for the model once, so each call
  // sends the same message objects, whose JSON the provider copies from the call before (RequestMemo).
  const sent = prefix.slice();
  for (const message of history) sent.push(modelView(message));
  const memo = input.memo ?? new RequestMemo();
  for (let iteration = 1; iteration <= input.maxIterations; iteration++) {
    signal.throwIfAborted();
    const messages = [...sent, ...forModel(added)];
    events.emit("llm.request", { ...scope, model: provider.name, iteration, messages: messages.length, tools: specs.length });
    const started = input.now();
    streamed = 0;
    firstDelta = undefined;
    // The client's tool_choice binds the turn's first answer only (a forced call every time would never end).
    const sampling = input.sampling && iteration > 1 && input.sampling.toolChoice !== undefined ? { ...input.sampling, toolChoice: undefined } : input.sampling;
    const response = await provider.chat(
      { messages, tools: specs, signal, memo, ...(sampling ? { sampling } : {}), ...(input.watched ? { watched: true } : {}) },
      onDelta,
    );
    usage.add(response.usage);
    events.emit("llm.response", {
      ...scope,
      model: response.modelName,
      iteration,
      toolCalls: response.toolCalls.length,
      durationMs: input.now() - started,
      ...(firstDelta === undefined ? {} : { firstTokenMs: firstDelta - started }),
      ...(response.usage ? { usage: response.usage } : {}),
    });

    if (response.toolCalls.length === 0) {
      let reply = response.text ?? "";
      // Say so when the model ran out of output room: a cut-off answer must not pass as a whole one.
      if (response.finishReason === "length") reply = `${reply}\n\n${CUT_OFF_NOTE}`.trimStart();
      showRest(reply, (response.text ?? "").slice(0, streamed));
      added.push({ role: "assistant", content: reply });
      await input.history.append(sessionKey, added.map(withoutThinking));
      shown.finish();
      if (reply) input.deliver({ from: "agent", text: reply }, { turnId: input.turnId });
      return { reply, hitLimit: false, cutOff: response.finishReason === "length", ...usage.total() };
    }

    // The model's thinking goes back with the rest of the turn (Anthropic requires it with tools), and no further.
    added.push({
      role: "assistant",
      content: response.text || null,
      tool_calls: response.toolCalls,
      ...(response.thinking ? { thinking: response.thinking } : {}),
    });
    // The calls of one answer run side by side (a model asks for several only when they are
    // independent, e.g. a fan-out of subagents); they start in order, and their results go
    // back, and reach the user, in the order the model asked.
    const clientCalls = response.toolCalls.filter((call) => clientNames.has(call.function.name));
    const own = response.toolCalls.filter((call) => !clientNames.has(call.function.name));
    const results = await Promise.all(own.map((call) => tools.execute(call, toolContext)));
    own.forEach((call, i) => {
      const result = results[i]!;
      // What the user is shown (within the turn's output budget) is what the history keeps as shown.
      const seen = !result.silent && result.forUser ? shown.tool(call.function.name, result.forUser, call.id) : false;
      added.push({
        role: "tool",
        tool_call_id: call.id,
        content: result.forLLM,
        ...(result.isError ? { is_error: true } : {}),
        ...(seen ? { shown: result.forUser } : {}),
        ...(result.keepDetails && result.details !== undefined ? { details: result.details } : {}),
      });
    });
    if (clientCalls.length > 0) {
      // The client runs these: the turn so far is kept, and goes on when their results come.
      await input.history.append(sessionKey, added.map(withoutThinking));
      return { reply: response.text ?? "", hitLimit: false, cutOff: false, clientCalls, ...usage.total() };
    }
  }

  signal.throwIfAborted();
  const reply = limitReply(input.maxIterations);
  showRest(reply, "");
  added.push({ role: "assistant", content: reply });
  await input.history.append(sessionKey, added.map(withoutThinking));
  shown.finish();
  input.deliver({ from: "agent", text: reply }, { turnId: input.turnId });
  return { reply, hitLimit: true, cutOff: false, ...usage.total() };
}

/** What a call the client never ran gets as its result. */
export const NO_CLIENT_RESULT = "[No result: the client did not run this call; the conversation went on without it.]";

/** The ids of the last answer's tool calls that no tool message answers (calls handed to a client that sent something else). */
function unansweredCalls(history: readonly ChatMessage[]): string[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (message.role === "user") return [];
    if (message.role === "assistant" && message.tool_calls?.length) {
      const answered = new Set(history.slice(i + 1).flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
      return message.tool_calls.map((call) => call.id).filter((id) => !answered.has(id));
    }
  }
  return [];
}

/** The user's message as the model gets it: its text, or its text and images as parts. */
function userContent(text: string, images: readonly ImageInput[]): string | ContentPart[] {
  if (images.length === 0) return text;
  return [
    ...(text === "" ? [] : [{ type: "text" as const, text }]),
    ...images.map((image): ContentPart => ({ type: "image_url", image_url: { url: image.url, ...(image.detail ? { detail: image.detail } : {}) } })),
  ];
}

/** A tool set's calls as runtime events; `tool.end` carries what the user sees of a result that is not silent (within the turn's output budget). */
function toolEvents(events: EventBus, scope: { agentId: string; sessionKey: string; turnId: string }, fits: (text: string) => boolean): CallObserver {
  return {
    started: (tool, callId) => events.emit("tool.start", { ...scope, tool, callId }),
    ended: (tool, callId, result, durationMs) => {
      // The text goes with the event only while the turn's output budget has room for it (as its delivery will).
      const text = !result.silent && result.forUser && fits(result.forUser) ? { text: result.forUser } : {};
      events.emit("tool.end", { ...scope, tool, callId, isError: result.isError, silent: result.silent, durationMs, ...text });
    },
    published: (tool, callId, details) => events.emit("tool.update", { ...scope, tool, callId, details }),
  };
}
