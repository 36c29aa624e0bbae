import { exampleOf } from "./builtin-json.js";
import { type ChatMessage, type ToolCall, textOf } from "./message.js";
import type { ModelDelta, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";

/**
 * The embedded default model: offline, deterministic, instant. A plain
 * message gets an echo and a hint on connecting a real model. A message made
 * only of lines `CALL <tool> <json-args>` makes it call those tools, one per
 * round, and then summarise what they returned, so tools can be watched
 * working without any key.
 */
export class BuiltinModel implements ModelProvider {
  /** It reads text only. */
  readonly vision = false;

  constructor(
    readonly name: string,
    /** Waits between the pieces of a watched answer (injected by tests). */
    private readonly pause: (ms: number, signal: AbortSignal) => Promise<void> = pauseFor,
  ) {}

  async chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    request.signal.throwIfAborted();
    const response = this.answer(request);
    if (response.text && onDelta) {
      // Followed as it streams: the answer comes in paced pieces, so a person can see streaming work offline.
      const pieces = request.watched ? piecesOf(response.text) : [response.text];
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await this.pause(PIECE_PAUSE_MS, request.signal);
        request.signal.throwIfAborted();
        onDelta({ type: "text", text: piece });
      }
    }
    response.toolCalls.forEach((call, index) => {
      onDelta?.({ type: "tool_call", index, id: call.id, name: call.function.name, arguments: call.function.arguments });
    });
    return response;
  }

  private answer(request: ModelRequest): ModelResponse {
    const { messages } = request;
    let lastUser = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.role === "user") {
        lastUser = i;
        break;
      }
    }
    const text = lastUser >= 0 ? textOf(messages[lastUser]!.content) : "";
    if (text.startsWith("[System note:")) return this.reply(relay(text));
    const script = parseScript(text);
    // A structured request gets JSON of that structure (an example), so a client's structured output can be tried offline.
    // A forced tool call (tool_choice required, or a named tool) without a script: that tool (or the one offered last: a client's, when it sent some), with arguments of its shape.
    const choice = request.sampling?.toolChoice;
    if (!script && (choice === "required" || (typeof choice === "object" && choice !== null)) && request.tools.length > 0 && messages.at(-1)?.role === "user") {
      const last = request.tools.at(-1)!;
      const tool = typeof choice === "object" ? (request.tools.find((t) => t.name === choice.name) ?? last) : last;
      const call: ToolCall = {
        id: `call_${messages.length}_1`,
        type: "function",
        function: { name: tool.name, arguments: JSON.stringify(exampleOf(tool.parameters) ?? {}) },
      };
      return { text: null, toolCalls: [call], finishReason: "tool_calls", modelName: this.name };
    }
    // After calls it did not script (forced ones), it says what they returned, as after a script.
    if (!script) {
      const after = messages.slice(lastUser + 1);
      const made = after.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
      const results = after.filter((m) => m.role === "tool");
      if (made.length > 0 && results.length > 0)
        return this.reply(
          summarise(
            made.map((call) => ({ tool: call.function.name, args: call.function.arguments })),
            results,
          ),
        );
    }
    const format = request.sampling?.responseFormat;
    if (!script && format) return this.reply(JSON.stringify(format.type === "json_schema" ? exampleOf(format.schema) : { answer: withoutNotes(text) }));
    if (!script)
      return this.reply(
        echo(
          withoutNotes(text),
          request.tools.map((t) => t.name),
        ),
      );

    const results = messages.slice(lastUser + 1).filter((m) => m.role === "tool");
    const next = script[results.length];
    if (next) {
      const call: ToolCall = {
        id: `call_${messages.length}_${results.length + 1}`,
        type: "function",
        function: { name: next.tool, arguments: next.args },
      };
      return { text: null, toolCalls: [call], finishReason: "tool_calls", modelName: this.name };
    }
    return this.reply(summarise(script, results));
  }

  private reply(text: string): ModelResponse {
    return { text, toolCalls: [], finishReason: "stop", modelName: this.name };
  }
}

/** A watched answer comes in at most this many pieces, this far apart: well under a second in all. */
const MAX_PIECES = 24;
const PIECE_PAUSE_MS = 25;

/** The answer cut at word ends into at most MAX_PIECES pieces of about equal length; joined, they are the answer. */
export function piecesOf(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(text.length / MAX_PIECES));
  const pieces: string[] = [];
  let piece = "";
  for (const word of words) {
    piece += word;
    if (piece.length >= size) {
      pieces.push(piece);
      piece = "";
    }
  }
  if (piece !== "") pieces.push(piece);
  return pieces;
}

function pauseFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

interface ScriptedCall {
  tool: string;
  args: string;
}

const CALL_LINE = /^CALL[ \t]+(\S+)(?:[ \t]+(.*))?$/;

/** The scripted calls of a message, or null when it is not made only of CALL lines. */
export function parseScript(text: string): ScriptedCall[] | null {
  // Bracketed lines are notes the gateway adds (a subagent's context line), not part of the script.
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^\[.*\]$/.test(l));
  if (lines.length === 0) return null;
  const calls: ScriptedCall[] = [];
  for (const line of lines) {
    const match = CALL_LINE.exec(line);
    if (!match) return null;
    calls.push({ tool: match[1]!, args: match[2]?.trim() || "{}" });
  }
  return calls;
}

const MAX_RESULT_CHARS = 2000;

function summarise(script: ScriptedCall[], results: ChatMessage[]): string {
  const lines = [`Ran ${script.length} tool call${script.length === 1 ? "" : "s"}:`];
  script.forEach((call, i) => {
    const result = results[i] as { content: string; is_error?: boolean } | undefined;
    let content = result?.content ?? "(no result)";
    if (content.length > MAX_RESULT_CHARS) content = `${content.slice(0, MAX_RESULT_CHARS)}…`;
    const head = `${i + 1}. ${call.tool}${result?.is_error ? " (error)" : ""}:`;
    const json = jsonBlock(content);
    lines.push(json === undefined ? `${head} ${content}` : `${head}\n${json}`);
  });
  return lines.join("\n");
}

/** A message without the gateway's bracketed note lines (a subagent's context line, a system note's frame). */
function withoutNotes(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !/^\[.*\]$/.test(line.trim()))
    .join("\n")
    .trim();
}

/** A result that is a JSON object or array, as an indented Markdown code block (so a reader sees data, not a run-on line); else undefined. */
function jsonBlock(content: string): string | undefined {
  const trimmed = content.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    const pretty = JSON.stringify(JSON.parse(trimmed), null, 2);
    const fence = "`".repeat(Math.max(3, ...[...pretty.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    return `${fence}json\n${pretty}\n${fence}`
      .split("\n")
      .map((line) => `   ${line}`)
      .join("\n");
  } catch {
    return undefined;
  }
}

/** A system note (a background subagent's result): passed on without the gateway's bracketed lines. */
function relay(note: string): string {
  const title = note.includes("did not finish") ? "Background work did not finish:" : "Background work finished:";
  return `${title}\n\n${withoutNotes(note) || "(no answer)"}`;
}

/** A script line that works with the tools this agent has. */
function example(tools: string[]): string {
  if (tools.includes("todo")) return `CALL todo {"action":"read"}`;
  if (tools.includes("subagent")) return `CALL subagent {"task":"say hello","label":"demo"}`;
  return tools.length ? `CALL ${tools[0]} {}` : `CALL todo {"action":"read"} (after turning todo on: PICOCLAW_TOOLS_TODO_ENABLED=true)`;
}

function echo(text: string, tools: string[]): string {
  const toolLine = tools.length ? `Tools this agent can use: ${tools.join(", ")}.` : "This agent has no tools enabled.";
  return [
    `You said: ${text}`,
    "",
    "I am PicoClaw's built-in offline model: I echo messages and run tool calls you script.",
    `To try a tool, send lines like: ${example(tools)}`,
    toolLine,
    'To talk to a real model, add an entry to model_list in picoclaw.config.json and set agents.defaults.model_name (README: "Connecting a model").',
  ].join("\n");
}
