/**
 * `gateway.limits.drop_start_code`: once a gateway has started, it drops
 * the compiled code only start-up ran and compacts its heap
 * (src/idle-collect.ts, `dropStartCode`). Proven on the real process: a
 * module loaded with `--import` prints on SIGUSR2 the bytes V8 holds for
 * the old generation, for a gateway with the drop and one without it, and
 * both answer turns after.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { waitFor } from "../support/wait.js";

/** On SIGUSR2: the bytes V8 holds for its old generation (every space but the young one), as they are. */
const OLD_GENERATION = `data:text/javascript,${encodeURIComponent(
  'import v8 from "node:v8";process.on("SIGUSR2",()=>{let b=0;for(const s of v8.getHeapSpaceStatistics())if(s.space_name!=="new_space")b+=s.space_size;process.stderr.write("HELD "+b+"\\n")})',
)}`;

async function startGateway(config: Record<string, unknown>) {
  const project = writeProject({ config: { ...config, gateway: { port: 0, ...(config.gateway as object | undefined) } } });
  const { child, output } = picoclawProcess(["gateway"], project, [], { nodeArgs: ["--import", OLD_GENERATION] });
  await waitFor('the gateway\'s "listening on" line', () => /listening on http:\/\/\S+/.test(output()), { instead: output });
  const url = /listening on (http:\/\/\S+)/.exec(output())![1]!;
  return {
    url,
    output,
    /** The bytes V8 holds for the old generation. */
    oldGeneration: async () => {
      const from = output().length;
      child.kill("SIGUSR2");
      await waitFor("the HELD line after SIGUSR2", () => /HELD \d+\n/.test(output().slice(from)), { instead: () => output().slice(from) });
      return Number(/HELD (\d+)\n/.exec(output().slice(from))![1]);
    },
  };
}

describe("the code only start-up ran", () => {
  it("is dropped once the gateway has started: its heap holds less than one that keeps it, and it answers turns after", { timeout: 60_000 }, async () => {
    const model = await FakeModelServer.start(() => textCompletion("hello back"));
    onTestFinished(() => model.close());
    const dropping = await startGateway(openaiConfig(model.url));
    const keeping = await startGateway({ ...openaiConfig(model.url), gateway: { limits: { drop_start_code: false } } });

    await waitFor("the start-up code dropped", () => /started: start-up's code dropped, heap \S+ MiB -> \S+ MiB/.test(dropping.output()), {
      instead: dropping.output,
    });
    const dropped = await dropping.oldGeneration();
    const kept = await keeping.oldGeneration();
    expect(keeping.output()).not.toContain("start-up's code dropped");
    // What start-up alone compiled and left, and the pages it sat on: ~2 MiB in a default gateway; nothing without the drop.
    expect(kept - dropped).toBeGreaterThan(512 * 1024);

    for (const gateway of [dropping, keeping]) {
      const res = await fetch(`${gateway.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "hi" }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reply: string }).reply).toBe("hello back");
    }
  });
});
