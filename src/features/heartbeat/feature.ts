import { ConfigError, messageOf } from "../../errors.js";
import { defineFeature } from "../../port/feature.js";
import { sessionKeyFor } from "../../session/key.js";
import { heartbeatFromPicoclaw, heartbeatSection } from "./config.js";
import { NOTHING_TO_TELL, heartbeatMessage, heartbeatTasks } from "./tasks.js";

/** The most of HEARTBEAT.md that is read. */
const MAX_FILE_BYTES = 64 * 1024;

/** What the heartbeat offers tests and embedders: one check now, as a tick runs it. */
export interface HeartbeatApi {
  /** Resolves with what the check did: `idle` (no task: no model call), `told` (delivered), `quiet` (HEARTBEAT_OK), `busy` (the last one still runs). */
  check(): Promise<"idle" | "told" | "quiet" | "busy">;
}

/**
 * The heartbeat (`heartbeat`), PicoClaw's: every `interval_minutes` (on the
 * runtime's timer, from when the gateway listens) it reads HEARTBEAT.md of
 * the agent's workspace and, only when it holds a task (heartbeatTasks), runs
 * a turn on it in the session `agent:<agent>:heartbeat:default`, whose history
 * holds the last check only. An answer other than HEARTBEAT_OK goes to
 * `deliver_to`'s chat, when set. One check at a time; a check still running
 * at the next tick makes that tick pass. Off by default.
 */
export const heartbeatFeature = defineFeature({
  name: "heartbeat",
  needs: ["agents", "defaultAgentId", "workspace", "timer", "clock", "logger", "runTurn", "holdStop", "history", "deliverLater", "track"],
  config: { sections: { heartbeat: heartbeatSection }, fromPicoclaw: { heartbeat: heartbeatFromPicoclaw } },
  setup(host, config) {
    const section = config.sections.heartbeat;
    if (!section.enabled) return {};
    const agentId = section.agent ?? host.defaultAgentId;
    const agent = host.agents.get(agentId);
    if (!agent) throw new ConfigError([`heartbeat.agent: there is no agent "${agentId}" (it has: ${[...host.agents.keys()].join(", ")})`]);
    const sessionKey = sessionKeyFor(agent.id, "heartbeat", "default");
    const target = section.deliver_to?.split(":");
    const targetKey = target ? sessionKeyFor(agent.id, target[0]!, target.slice(1).join(":")) : undefined;
    let running = false;
    let stopped = false;
    let cancel: (() => void) | undefined;

    const check = async (): Promise<"idle" | "told" | "quiet" | "busy"> => {
      if (running) return "busy";
      running = true;
      try {
        const tasks = heartbeatTasks((await (await host.workspace(agent.id)).readStart("HEARTBEAT.md", MAX_FILE_BYTES))?.text ?? "");
        if (tasks === undefined) return "idle";
        const stop = host.holdStop(sessionKey);
        try {
          // Each check starts afresh: the session keeps the last one only (PicoClaw loads no history for it).
          await host.history.clear(sessionKey);
          const reply = await host.runTurn(agent, sessionKey, heartbeatMessage(tasks, new Date(host.clock.now())), stop.signal);
          if (NOTHING_TO_TELL.test(reply) || reply.trim() === "") return "quiet";
          if (targetKey) host.deliverLater(agent.id, targetKey, { from: "heartbeat", text: reply });
          return "told";
        } finally {
          stop.release();
        }
      } finally {
        running = false;
      }
    };
    const schedule = () => {
      if (stopped) return;
      cancel = host.timer(section.interval_minutes * 60_000, () => {
        const ran = check()
          .catch((error: unknown) => host.logger.warn(`heartbeat: the check failed: ${messageOf(error)}`))
          .finally(schedule);
        host.track(ran);
      });
    };
    const api: HeartbeatApi = { check };
    return {
      start: () => schedule(),
      stop: () => {
        stopped = true;
        cancel?.();
      },
      api,
    };
  },
});
