import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { fileNameOf } from "../../src/session/jsonl/file-names.js";
import { writeProject } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

/** Start-up of the real gateway with many sessions stored, against none (README, "Sessions on disk": start-up reads no session). */

const root = path.resolve(import.meta.dirname, "..", "..");
const STORED = 10_000;

/**
 * Loaded into the gateway with --import: counts the file system calls
 * naming a path in WATCH_DIR (the session folder), and on SIGUSR2 prints
 * how many there had been when the file FIRST_FILE was first opened, by
 * either API (for writing: a missing file is looked for with a lstat, not
 * opened), so start-up and the first turn up to its write, and the heap's
 * live bytes after a full GC.
 */
const COUNTING = `data:text/javascript,${encodeURIComponent(`
import fs from "node:fs";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
const dir = process.env.WATCH_DIR;
let calls = 0;
let atWrite;
const wrap = (owner, name) => {
  const original = owner[name];
  owner[name] = function (file, ...rest) {
    const named = typeof file === "string" ? file : file instanceof URL ? file.pathname : "";
    if (named.startsWith(dir)) {
      calls++;
      if (atWrite === undefined && ((owner === fsp && name === "open") || (owner === fs && name === "openSync")) && named === process.env.FIRST_FILE) atWrite = calls;
    }
    return original.call(this, file, ...rest);
  };
};
for (const name of ["lstatSync", "statSync", "readdirSync", "opendirSync", "openSync", "readFileSync", "existsSync", "accessSync"]) wrap(fs, name);
for (const name of ["open", "readFile", "stat", "lstat", "readdir", "opendir", "access"]) wrap(fsp, name);
syncBuiltinESMExports();
process.on("SIGUSR2", () => {
  gc();
  gc();
  process.stderr.write("fs calls " + atWrite + " heap " + process.memoryUsage().heapUsed + "\\n");
});
`)}`;

/** A project whose session folder holds `count` sessions of one exchange each, as a gateway wrote them. */
function projectWith(count: number): { project: string; sessions: string } {
  // Without the drop of start-up's code: whether it runs (before the first turn) or not (the turn came first) is a
  // matter of timing, and would make the two processes' heaps differ by ~0.6 MB.
  const project = writeProject({ config: { gateway: { limits: { drop_start_code: false } } } });
  const sessions = path.join(project, "sessions");
  mkdirSync(sessions, { recursive: true });
  for (let i = 0; i < count; i++) {
    writeFileSync(
      path.join(sessions, `${fileNameOf(`agent:main:http:stored${i}`)}.jsonl`),
      `{"role":"user","content":"hello ${i}"}\n{"role":"assistant","content":"hi ${i}"}\n`,
    );
  }
  return { project, sessions };
}

/** Starts the gateway, runs one turn of a new session, and reads the counts. */
async function startAndTurn(project: string, sessions: string): Promise<{ calls: number; heap: number }> {
  const child = spawn(process.execPath, ["--expose-gc", "--import", COUNTING, path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: {
      ...process.env,
      PICOCLAW_CONFIG: "",
      PICOCLAW_GATEWAY_PORT: "0",
      PICOCLAW_LOG_LEVEL: "warn",
      WATCH_DIR: sessions,
      FIRST_FILE: path.join(sessions, `${fileNameOf("agent:main:http:first")}.jsonl`),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await eventually(() => expect(output).toMatch(/listening on http:\/\/\S+/));
  const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
  const res = await fetch(`${url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "hello", session: "first" }),
  });
  expect(res.status).toBe(200);
  // What the gateway makes in the background once it listens (each agent's tool specs, the answer reader) done in
  // both processes before the heap is read: read while it ran in one and not the other, the two differed by ~1 MB.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  child.kill("SIGUSR2");
  await eventually(() => expect(output).toMatch(/fs calls \d+ heap \d+/));
  const [, calls, heap] = /fs calls (\d+) heap (\d+)/.exec(output)!;
  child.kill("SIGTERM");
  await within("the gateway to stop", exited);
  return { calls: Number(calls), heap: Number(heap) };
}

describe("start-up with many sessions stored", () => {
  it(`a gateway with ${STORED} sessions stored starts and answers its first turn touching no more files than one with none, and holds no memory for them`, {
    timeout: 120_000,
  }, async () => {
    const empty = projectWith(0);
    const full = projectWith(STORED);
    const none = await startAndTurn(empty.project, empty.sessions);
    const many = await startAndTurn(full.project, full.sessions);
    // The same calls: the lock, the journal looked for, the first session's file. None per stored session.
    expect(many.calls).toBe(none.calls);
    expect(none.calls).toBeLessThan(20);
    // An index entry per stored session (as start-up once built) would be hundreds of bytes each: megabytes here.
    expect(many.heap - none.heap).toBeLessThan(STORED * 50);
  });
});
