import type { Context } from "hono";
import { PicoclawError, messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * `GET /ready`: 200 while the session store answers (a database: `SELECT 1`
 * within session.postgres.ready_timeout_ms), else 503, for a load balancer
 * to send requests elsewhere meanwhile. A store in this process (memory,
 * jsonl) always answers. Like /health it needs no token; the answer names
 * no host, the log says why (once when it stops answering, once when it is
 * back).
 */
export function readiness(runtime: Runtime, logger: Logger): (c: Context) => Promise<Response> {
  let answering = true;
  return async (c) => {
    try {
      await runtime.probeStore();
    } catch (error) {
      if (answering) logger.warn(`GET /ready: 503, the session store does not answer: ${messageOf(error)}`);
      answering = false;
      const code = error instanceof PicoclawError ? error.code : "internal";
      return c.json({ status: "unavailable", error: { code, message: "the session store does not answer; the gateway's log says why" } }, 503);
    }
    if (!answering) logger.info("GET /ready: the session store answers again");
    answering = true;
    return c.json({ status: "ready" });
  };
}
