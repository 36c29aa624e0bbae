// An instant OpenAI-compatible model in a process of its own, shared by the
// gateway and the minimal gateway in `bench/floor.ts`. When the last message
// is from the user it calls the tool FAKE_TOOL with FAKE_ARGS; after a tool
// result it answers "done". A request with `"stream": true` gets the answer
// as server-sent events (OpenAI's chunks, in one write), otherwise as one
// JSON document. Prints `listening on <url>` once it listens.
import { createServer } from "node:http";

const tool = process.env.FAKE_TOOL ?? "todo";
const args = process.env.FAKE_ARGS ?? '{"action":"read"}';
const base = { id: "b", created: 0, model: "bench" };
const toolCall = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: tool, arguments: args } }] };
const done = { role: "assistant", content: "done" };

const whole = (message, finish) => JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }] });
const chunk = (delta, finish) =>
  `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const streamed = (delta, finish) => `${chunk(delta, null)}${chunk({}, finish)}data: [DONE]\n\n`;

const answers = {
  whole: { tool: whole(toolCall, "tool_calls"), done: whole(done, "stop") },
  stream: {
    tool: streamed({ role: "assistant", tool_calls: [{ index: 0, ...toolCall.tool_calls[0] }] }, "tool_calls"),
    done: streamed({ role: "assistant", content: "done" }, "stop"),
  },
};

const server = createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(parts).toString());
    const after = body.messages.at(-1)?.role === "tool" ? "done" : "tool";
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(answers.stream[after]);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answers.whole[after]);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/v1`));
process.on("SIGTERM", () => process.exit(0));
