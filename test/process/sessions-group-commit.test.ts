import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JOURNAL_FILES } from "../../src/session/jsonl/journal.js";
import { picoclawProcess } from "../support/cli.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

/** The real gateway killed while many clients' turns share the journal's syncs (README, "Sessions on disk"). */

const CLIENTS = 16;

async function listening(gateway: ReturnType<typeof picoclawProcess>): Promise<string> {
  await eventually(() => expect(gateway.output()).toMatch(/listening on http:\/\/\S+/));
  return /listening on (http:\/\/\S+)/.exec(gateway.output())![1]!;
}

const chat = (url: string, session: string, message: string) =>
  fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });

describe("a gateway killed during a group commit", () => {
  it("kill -9 while 16 clients' turns are being synced together, then a restart: every acknowledged turn is there exactly once, and nothing torn", {
    timeout: 120_000,
  }, async () => {
    const model = await FakeModelServer.start((request) => {
      const messages = request.body.messages as { role: string; content: string }[];
      return textCompletion(`ok: ${messages.at(-1)!.content}`);
    });
    try {
      const project = writeProject({ config: { ...openaiConfig(model.url, { stream: false }), gateway: { port: 0 } } });
      const first = picoclawProcess(["gateway"], project);
      const url = await listening(first);
      const acknowledged: number[][] = Array.from({ length: CLIENTS }, () => []);
      let killed = false;
      // Each client on a session of its own, a turn after the other, until the gateway is gone.
      const clients = Array.from({ length: CLIENTS }, async (_, client) => {
        for (let n = 1; !killed; n++) {
          try {
            const res = await chat(url, `c${client}`, `c${client}-t${n}`);
            if (res.status !== 200) throw new Error(`turn ${n} of client ${client} answered ${res.status}: ${await res.text()}`);
            if ((await jsonOf(res)).reply === `ok: c${client}-t${n}`) acknowledged[client]!.push(n);
          } catch (error) {
            if (!killed) throw error;
          }
        }
      });
      await eventually(() => expect(acknowledged.every((turns) => turns.length >= 5)).toBe(true), { ms: 60_000 });
      killed = true;
      first.child.kill("SIGKILL");
      expect(await within("the gateway to die of SIGKILL", first.exited)).toBeNull();
      await Promise.all(clients);
      // It died with turns in its journal, not checkpointed: the restart has something to replay.
      expect(existsSync(path.join(project, "sessions", JOURNAL_FILES[0]))).toBe(true);

      const second = picoclawProcess(["gateway"], project);
      const again = await listening(second);
      for (let client = 0; client < CLIENTS; client++) {
        const { messages } = await jsonOf(await fetch(`${again}/v1/sessions/agent:main:http:c${client}/history?limit=1000`));
        const texts = (messages as { role: string; content: string }[]).map((m) => `${m.role}: ${m.content}`);
        const turns = acknowledged[client]!;
        const expected = turns.flatMap((n) => [`user: c${client}-t${n}`, `assistant: ok: c${client}-t${n}`]);
        // The acknowledged turns, in order, once each; at most the one in flight after them, whole (it may have been written before the kill).
        expect(texts.slice(0, expected.length)).toEqual(expected);
        const next = turns.length + 1;
        expect([[], [`user: c${client}-t${next}`, `assistant: ok: c${client}-t${next}`]]).toContainEqual(texts.slice(expected.length));
      }
      expect(second.output()).not.toMatch(/cut short|not JSON|not a message/);
      const res = await chat(again, "c0", "after");
      expect((await jsonOf(res)).reply).toBe("ok: after");
      second.child.kill("SIGTERM");
      expect(await within("the restarted gateway to exit on SIGTERM", second.exited)).toBe(0);
      // A clean stop leaves no journal.
      expect(existsSync(path.join(project, "sessions", JOURNAL_FILES[0]))).toBe(false);
    } finally {
      await model.close();
    }
  });
});
