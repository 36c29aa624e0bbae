import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, ROOT, cpuMs, startServer } from "./processes.js";
const PROCS = path.join(ROOT, "bench", "procs");
const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
const dir = mkdtempSync(path.join(tmpdir(), "prof-"));
mkdirSync(path.join(dir, "agents", "main"), { recursive: true });
copyFileSync(path.join(ROOT, "agents", "main", "AGENT.md"), path.join(dir, "agents", "main", "AGENT.md"));
writeFileSync(
  path.join(dir, "picoclaw.config.json"),
  JSON.stringify({
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: model.url }],
    tools: { todo: { enabled: true } },
    ...JSON.parse(process.env.EXTRA ?? "{}"),
  }),
);
const args = process.env.PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/perfwork/prof"] : [];
const gw = await startServer(process.execPath, [...args, path.join(ROOT, "dist", "main.js"), "gateway"], {
  cwd: dir,
  env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0" },
});
const c = new Client(gw.url, 12);
let n = 0;
const run = async (ms: number) => {
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (performance.now() < until) {
        await c.chat("x", `s${n++}`);
      }
    }),
  );
};
await run(1000);
const g0 = cpuMs(gw.child.pid!);
n = 0;
const t0 = performance.now();
await run(Number(process.env.MS ?? 4000));
const secs = (performance.now() - t0) / 1000;
console.log({ perS: n / secs, cpuPerTurn: (cpuMs(gw.child.pid!) - g0) / n });
c.close();
await gw.stop();
await model.stop();
