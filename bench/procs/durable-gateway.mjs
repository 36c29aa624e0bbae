// The durable floor: the minimal gateway (minimal-gateway.mjs) with what a
// gateway that keeps its sessions cannot skip. node:http in; each session's
// history in memory (the last MAX_MESSAGES messages, as the gateway's
// default keeps), sent to the model with the new message; the model called
// with fetch (whole answers) until it stops calling tools; every tool call
// answered with one constant result; then the turn's messages appended to
// the session's JSONL file in SESSION_DIR with one write and one fdatasync,
// and, for a new file, the folder synced, all before the reply goes out.
// Files stay open (the most recent MAX_OPEN). No limits, no logs, no
// recovery. MODEL_URL is the model's base URL; PORT the port (0: any free
// one); SESSION_DIR the folder. Prints `listening on <url>` once it listens.
import { mkdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";

const model = `${process.env.MODEL_URL}/chat/completions`;
const dir = process.env.SESSION_DIR;
const MAX_MESSAGES = 500;
const MAX_OPEN = 64;
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

mkdirSync(dir, { recursive: true });
const folder = await open(dir, "r");
/** Session → its messages. */
const histories = new Map();
/** Session → its file, open for appending, least recently used first. */
const files = new Map();

async function fileOf(session) {
  let handle = files.get(session);
  let created = false;
  if (handle) files.delete(session);
  else {
    handle = await open(path.join(dir, `${encodeURIComponent(session)}.jsonl`), "a", 0o600);
    created = !histories.has(session);
  }
  files.set(session, handle);
  for (const [name, old] of files) {
    if (files.size <= MAX_OPEN) break;
    files.delete(name);
    old.close();
  }
  return { handle, created };
}

async function turn(session, message) {
  const history = histories.get(session) ?? [];
  const added = [{ role: "user", content: message }];
  for (;;) {
    const res = await fetch(model, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "bench", messages: [{ role: "system", content: system }, ...history, ...added], tools }),
    });
    const answer = (await res.json()).choices[0].message;
    added.push(answer);
    if (!answer.tool_calls?.length) break;
    for (const call of answer.tool_calls) added.push({ role: "tool", tool_call_id: call.id, content: RESULT });
  }
  const { handle, created } = await fileOf(session);
  await handle.write(added.map((m) => `${JSON.stringify(m)}\n`).join(""));
  await handle.datasync();
  if (created) await folder.sync();
  history.push(...added);
  if (history.length > MAX_MESSAGES) history.splice(0, history.length - MAX_MESSAGES);
  histories.set(session, history);
  return added.at(-1).content;
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
    const { message, session } = JSON.parse(Buffer.concat(parts).toString());
    turn(String(session), message).then(
      (reply) => send(200, { reply }),
      (error) => send(502, { error: String(error) }),
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`durable floor listening on http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
