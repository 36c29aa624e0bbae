/**
 * The tools that act, driven from outside as a user runs them: the real
 * gateway process (`node dist/main.js gateway`), a fake OpenAI model server
 * (the model calls the tools its script says, over the real wire format),
 * and HTTP requests. The model reads, edits and lists workspace files; tries
 * every escape (`..`, absolute paths, a symlink out, a NUL, a device, a
 * FIFO, a 10 GB file, an empty old_text) and gets an error result naming
 * each, with nothing outside read or written; runs commands that are
 * allowed, denied, timed out and flooding; fetches local pages through an
 * allow-listed host and is refused on the others (and on the metadata
 * address); searches through a fake SearXNG. The gateway stays up throughout.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  writeSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, useScriptedModel } from "../support/scripted-openai.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { sseReader } from "../support/sse.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const TOKEN = "acting-gateway-token";
const model = useScriptedModel();

let gateway: ChildProcess;
/** A local site: /page (HTML), /data (JSON), /to-metadata (a redirect to the cloud metadata address); and a fake SearXNG. */
let site: Server;
let searx: Server;
const searches: string[] = [];
const port = (server: Server) => (server.address() as AddressInfo).port;
let url = "";
let dir = "";
let workspace = "";
const output = { text: "" };

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === "/page") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        "<!doctype html><html><head><title>Local</title></head><body><article><h1>Local page</h1><p>Served on the loopback, allowed by the operator.</p></article></body></html>",
      );
    } else if (req.url === "/data") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"answer":42}');
    } else {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    }
  });
  searx = createServer((req, res) => {
    searches.push(req.url ?? "");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ results: [{ title: "PicoClaw", url: "https://picoclaw.example/", content: "A gateway for agents." }] }));
  });
  await Promise.all([site, searx].map((server) => new Promise<void>((done) => server.listen(0, "127.0.0.1", done))));
  // A folder of its own for the whole file (tempDir's clean-up is per test).
  dir = mkdtempSync(path.join(tmpdir(), "picoclaw-acting-"));
  writeProject(
    {
      config: {
        ...openaiConfig(model.server.url),
        gateway: { token: TOKEN },
        tools: {
          // On by default, under approval "ask": each command waits for a decision on the approvals route.
          exec: { timeout_seconds: 2, max_output_bytes: 4096 },
          web: { allow_hosts: [`127.0.0.1:${port(site)}`], searxng: { enabled: true, api_base: `http://127.0.0.1:${port(searx)}` } },
        },
      },
    },
    dir,
  );
  gateway = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  gateway.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  gateway.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  url = await within(
    'the gateway\'s "listening on" line',
    new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const match = /listening on (http:\/\/\S+)/.exec(output.text);
        if (match) {
          clearInterval(poll);
          resolve(match[1]!);
        }
      }, 20);
      gateway.once("exit", (code) => {
        clearInterval(poll);
        reject(new Error(`exited with ${code}:\n${output.text}`));
      });
    }),
    { ms: 60_000, instead: () => output.text },
  );
  workspace = realpathSync(path.join(dir, "workspace"));
  mkdirSync(path.join(dir, "outside"));
  writeFileSync(path.join(dir, "outside", "secret.txt"), "the outside secret");
}, 90_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((done) => gateway.once("exit", done));
    gateway.kill("SIGTERM");
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  await Promise.all([site, searx].map((server) => server && new Promise((done) => server.close(done))));
});

const headers = { "content-type": "application/json", authorization: `Bearer ${TOKEN}` };

/** The approval requests waiting in a session, over HTTP. */
async function waiting(session: string): Promise<{ id: string; tool: string; arguments: unknown }[]> {
  return (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:${session}/approvals`, { headers }))).approvals;
}

function decide(session: string, id: string, decision: string): Promise<Response> {
  return fetch(`${url}/v1/sessions/agent:main:http:${session}/approvals/${id}`, { method: "POST", headers, body: JSON.stringify({ decision }) });
}

/**
 * One message whose script is `lines`; the tool results the model got (from
 * the session's history over HTTP). With `approve`, the first approval
 * request the turn makes gets that decision (`allow_session` covers the rest).
 */
async function turn(...lines: string[]): Promise<{ text: string; error: boolean }[]> {
  return approvedTurn(undefined, ...lines);
}

async function approvedTurn(approve: string | undefined, ...lines: string[]): Promise<{ text: string; error: boolean }[]> {
  const session = `t${Math.random().toString(36).slice(2, 8)}`;
  const answer = fetch(`${url}/v1/chat`, { method: "POST", headers, body: JSON.stringify({ message: lines.join("\n"), session }) });
  if (approve) {
    const [request] = await eventually(async () => {
      const found = await waiting(session);
      if (found.length === 0) throw new Error("no approval request yet");
      return found;
    });
    expect((await decide(session, request!.id, approve)).status).toBe(200);
  }
  const res = await answer;
  expect(res.status, await res.clone().text()).toBe(200);
  const history = await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:${session}/history`, { headers }));
  return (history.messages as { role: string; content: string; is_error?: boolean }[])
    .filter((m) => m.role === "tool")
    .map((m) => ({ text: m.content, error: m.is_error === true }));
}

describe("file tools, from outside", () => {
  it("the model writes, reads, edits, appends and lists workspace files", async () => {
    const results = await turn(
      call("write_file", { path: "notes/todo.md", content: "- milk\n- eggs\n" }),
      call("edit_file", { path: "notes/todo.md", old_text: "eggs", new_text: "bread" }),
      call("append_file", { path: "notes/todo.md", content: "- tea\n" }),
      call("read_file", { path: "notes/todo.md" }),
      call("list_dir", { path: "notes" }),
    );
    expect(results.map((r) => r.error)).toEqual([false, false, false, false, false]);
    expect(results[3]!.text).toBe("[file: todo.md | total: 21 bytes | read: bytes 0-20]\n[END OF FILE - no further content.]\n\n- milk\n- bread\n- tea\n");
    expect(results[4]!.text).toBe("FILE: todo.md\n");
    expect(readFileSync(path.join(workspace, "notes", "todo.md"), "utf8")).toBe("- milk\n- bread\n- tea\n");
  });

  it("every escape is an error result naming what was refused, and nothing outside is read or written", async () => {
    symlinkSync(path.join(dir, "outside"), path.join(workspace, "way-out"));
    execFileSync("mkfifo", [path.join(workspace, "pipe")]);
    // 10 GB of log (sparse: text at its start and in its middle).
    writeFileSync(path.join(workspace, "huge.log"), "a log line\n".repeat(100));
    truncateSync(path.join(workspace, "huge.log"), 10 * 1024 ** 3);
    const handle = openSync(path.join(workspace, "huge.log"), "r+");
    writeSync(handle, "0123456789abcdef", 5 * 1024 ** 3);
    closeSync(handle);
    writeFileSync(path.join(workspace, "page.md"), "text");
    const results = await turn(
      call("read_file", { path: "../outside/secret.txt" }),
      call("read_file", { path: path.join(dir, "outside", "secret.txt") }),
      call("read_file", { path: "way-out/secret.txt" }),
      call("write_file", { path: "way-out/planted.txt", content: "x" }),
      call("read_file", { path: "page.md\u0000.txt" }),
      call("read_file", { path: "/dev/zero" }),
      call("read_file", { path: "pipe" }),
      call("edit_file", { path: "page.md", old_text: "", new_text: "y" }),
      call("write_file", { path: "/etc/planted.txt", content: "x" }),
    );
    expect(results.every((r) => r.error)).toBe(true);
    const texts = results.map((r) => r.text);
    expect(texts[0]).toMatch(/outside the workspace/);
    expect(texts[1]).toMatch(/outside the workspace/);
    expect(texts[2]).toMatch(/resolves through a symlink to .*outside/);
    expect(texts[3]).toMatch(/outside the workspace/);
    expect(texts[4]).toMatch(/NUL/);
    expect(texts[5]).toMatch(/outside the workspace/);
    expect(texts[6]).toMatch(/not a regular file/);
    expect(texts[7]).toMatch(/old_text/);
    expect(texts[8]).toMatch(/outside the workspace/);
    expect(texts.join("\n")).not.toContain("the outside secret");
    expect(existsSync(path.join(dir, "outside", "planted.txt"))).toBe(false);
    expect(existsSync("/etc/planted.txt")).toBe(false);
    // A 10 GB file is read a window at a time.
    const [huge] = await turn(call("read_file", { path: "huge.log", offset: 5 * 1024 ** 3, length: 16 }));
    expect(huge!.text).toBe(
      "[file: huge.log | total: 10737418240 bytes | read: bytes 5368709120-5368709135]\n[TRUNCATED - file has more content. Call read_file again with offset=5368709136 to continue.]\n\n0123456789abcdef",
    );
  });
});

describe("exec, from outside", () => {
  it("runs what is allowed, refuses what is denied, kills what runs too long, and bounds a flood", async () => {
    // The first command waits for a person: allow_session lets this session's other commands run without asking.
    const results = await approvedTurn(
      "allow_session",
      call("exec", { action: "run", command: "echo hello from $PWD" }),
      call("exec", { action: "run", command: "echo ok; r'm' -rf /" }),
      call("exec", { action: "run", command: "cat /etc/passwd" }),
      call("exec", { action: "run", command: "echo slow; sleep 60" }),
      call("exec", { action: "run", command: "head -c 50000000 /dev/zero | tr '\\0' z; echo END" }),
    );
    expect(results[0]).toEqual({ text: `hello from ${workspace}\n`, error: false });
    expect(results[1]!.text).toMatch(/^Command blocked by safety guard \(dangerous pattern detected/);
    expect(results[2]!.text).toMatch(/^Command blocked by safety guard \(path outside working dir/);
    expect(results[3]).toEqual({ text: "Command timed out after 2s\n\nPartial output before timeout:\nslow\n", error: true });
    expect(results[4]!.text.endsWith("zzzEND\n")).toBe(true);
    expect(results[4]!.text).toMatch(/of output cut here; 47\.7 MiB in all/);
    // Still up and answering.
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });
});

describe("asking before exec, from outside", () => {
  it("a command waits for a decision, announced on the session's events stream: deny runs nothing, allow runs it", async () => {
    const session = `ask${Math.random().toString(36).slice(2, 8)}`;
    const key = `agent:main:http:${session}`;
    const events = sseReader(await fetch(`${url}/v1/sessions/${key}/events`, { headers }));
    const marker = path.join(workspace, `${session}.ran`);
    const first = fetch(`${url}/v1/chat`, {
      method: "POST",
      headers,
      body: JSON.stringify({ message: call("exec", { action: "run", command: `touch ${session}.ran` }), session }),
    });
    const requested = (await events.until("approval.requested")).at(-1)!.data;
    expect(requested).toMatchObject({ tool: "exec", arguments: { action: "run", command: `touch ${session}.ran` }, session_key: key });
    expect(existsSync(marker)).toBe(false);
    expect((await decide(session, requested.id, "deny")).status).toBe(200);
    expect((await decide(session, requested.id, "allow")).status).toBe(409);
    expect((await first).status).toBe(200);
    expect(existsSync(marker)).toBe(false);

    const second = fetch(`${url}/v1/chat`, {
      method: "POST",
      headers,
      body: JSON.stringify({ message: call("exec", { action: "run", command: `touch ${session}.ran` }), session }),
    });
    const again = (await events.until("approval.requested")).at(-1)!.data;
    expect((await decide(session, again.id, "allow")).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(existsSync(marker)).toBe(true);
    const history = (await jsonOf(await fetch(`${url}/v1/sessions/${key}/history`, { headers }))).messages;
    expect(
      history.filter((m: { record?: unknown }) => m.record).map((m: { record: { decision: string; by: string } }) => [m.record.decision, m.record.by]),
    ).toEqual([
      ["deny", "api"],
      ["allow", "api"],
    ]);
    await events.close();
  });

  it("a stateless OpenAI request gets a denial result: nobody can answer there", async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: call("exec", { action: "run", command: "touch stateless.ran" }) }] }),
    });
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).choices[0].message.content).toMatch(/exec was not run: it needs a person.s approval .* nobody can answer/);
    expect(existsSync(path.join(workspace, "stateless.ran"))).toBe(false);
  });
});

describe("web_fetch and web_search, from outside", () => {
  it("fetches the operator's allow-listed local page and refuses every other private address, a redirect to the metadata address too", async () => {
    const results = await turn(
      call("web_fetch", { url: `http://127.0.0.1:${port(site)}/page` }),
      call("web_fetch", { url: `http://127.0.0.1:${port(site)}/data` }),
      call("web_fetch", { url: `http://127.0.0.1:${port(searx)}/search` }),
      call("web_fetch", { url: "http://169.254.169.254/latest/meta-data/" }),
      call("web_fetch", { url: `http://localhost:${port(site)}/page` }),
      call("web_fetch", { url: `http://127.0.0.1:${port(site)}/to-metadata` }),
      call("web_fetch", { url: "file:///etc/passwd" }),
    );
    const page = JSON.parse(results[0]!.text) as { status: number; extractor: string; text: string };
    expect(page).toMatchObject({ status: 200, extractor: "markdown" });
    expect(page.text).toContain("Served on the loopback, allowed by the operator.");
    expect(JSON.parse(results[1]!.text)).toMatchObject({ extractor: "json", text: '{\n  "answer": 42\n}' });
    for (const refused of results.slice(2)) expect(refused.error, refused.text).toBe(true);
    expect(results[6]!.text).toBe("only http/https URLs are allowed");
    expect(searches).toEqual([]);
  });

  it("searches through the configured provider, with PicoClaw's result lines", async () => {
    const [result] = await turn(call("web_search", { query: "picoclaw" }));
    expect(result).toEqual({
      text: "Results for: picoclaw (via SearXNG)\n1. PicoClaw\n   https://picoclaw.example/\n   A gateway for agents.\n",
      error: false,
    });
    expect(searches).toHaveLength(1);
  });
});
