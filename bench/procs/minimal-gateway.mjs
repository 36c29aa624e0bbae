// The minimal gateway: what no gateway can skip, as the floor `bench/floor.ts`
// measures the real one against. node:http in; the model called with fetch
// (the whole answer, not streamed) until it stops calling tools; every tool
// call answered with one constant result; the reply out as JSON. The model
// gets a system prompt and one tool's definition, as a real gateway sends
// them. No sessions, no limits, no logs. MODEL_URL is the model's base URL;
// PORT the port (0: any free one). Prints `listening on <url>` once it listens.
import { createServer } from "node:http";

const model = `${process.env.MODEL_URL}/chat/completions`;
const system = "You are a capable, friendly general assistant. Answer plainly and directly.";
const tools = [
  {
    type: "function",
    function: {
      name: "todo",
      description: "Reads or replaces the plan.",
      parameters: { type: "object", properties: { action: { type: "string", enum: ["read", "write"] } }, required: ["action"] },
    },
  },
];
const RESULT = '{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}';

async function turn(message) {
  const messages = [
    { role: "system", content: system },
    { role: "user", content: message },
  ];
  for (;;) {
    const res = await fetch(model, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "bench", messages, tools }),
    });
    const answer = (await res.json()).choices[0].message;
    messages.push(answer);
    if (!answer.tool_calls?.length) return answer.content;
    for (const call of answer.tool_calls) messages.push({ role: "tool", tool_call_id: call.id, content: RESULT });
  }
}

const server = createServer((req, res) => {
  const send = (status, value) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  };
  if (req.method === "GET" && req.url === "/health") return send(200, { status: "ok" });
  if (req.method !== "POST" || req.url !== "/v1/chat") return send(404, { error: "not found" });
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", () => {
    const { message } = JSON.parse(Buffer.concat(parts).toString());
    turn(message).then(
      (reply) => send(200, { reply }),
      (error) => send(502, { error: String(error) }),
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`minimal gateway listening on http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
