// The packages the gateway is built on and nothing of ours: hono on @hono/node-server answering /health, one small
// zod schema checked, a pino logger, nanoid and async-mutex. bench/floor.ts bundles it as scripts/build.mjs bundles
// the gateway and starts it with `npm start`: what any gateway on this stack pays to start, before its own code.
import { serve } from "@hono/node-server";
import { Mutex } from "async-mutex";
import { Hono } from "hono";
import { nanoid } from "nanoid";
import pino from "pino";
import { z } from "zod";

const Settings = z.object({
  port: z.number().int().min(0).max(65_535).default(0),
  host: z.string().default("127.0.0.1"),
  model: z.object({ base_url: z.string().url(), api_key: z.string().optional() }).optional(),
});
const settings = Settings.parse({ port: Number(process.env.PORT ?? 0) });
const log = pino();
const lock = new Mutex();
const app = new Hono();
app.get("/health", (c) => c.json({ status: "ok" }));
serve({ fetch: app.fetch, port: settings.port, hostname: settings.host }, (info) =>
  log.info({ id: nanoid(), locked: lock.isLocked() }, `stack server listening on http://127.0.0.1:${info.port}`),
);
process.on("SIGTERM", () => process.exit(0));
