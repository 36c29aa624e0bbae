import { z } from "zod";
import type { AgentDefinition } from "../../agents/agent.js";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import type { FeatureRoute } from "../../port/route.js";
import { agentOfKey } from "../../session/key.js";
import { todoCommand } from "./command.js";
import type { PlanUpdate } from "./events.js";
import { type ListPlanChange, createTodoTool, readTodos } from "./list/tool.js";
import { createPhasesTool } from "./phases/tool.js";
import { type SharedPlanStore, type TodoStyle, createPlanStore, listAsPhases, listView, phasesView, planAsPhases } from "./plans.js";
import { TODO_RECORD, planResume } from "./resume.js";
import { TODO_STYLES, todoSection } from "./config.js";
import { TODO_FAILED, TODO_REMINDER_TOPIC, todoFailures } from "./failures.js";

export const TODO_TOOL = "todo";

/** Messages of a session read to find its latest plan (a history holds at most session.max_messages). */
const HISTORY_READ = 1_000_000;

/** What the todo feature offers its embedder and tests: the plan store both styles share. */
export interface TodoApi {
  readonly plans: SharedPlanStore;
}

/**
 * The todo feature: one `todo` tool in two styles (PicoClaw's list, and
 * phases of tasks), a plan store shared by both, `/todo`, the
 * `GET /v1/sessions/<key>/todos` view and the `plan.updated` event. An
 * agent gets the style its AGENT.md `todo_style` names, else
 * `tools.todo.style`.
 */
export const todoFeature = defineFeature({
  name: "todo",
  needs: ["events", "notify", "agent", "hasTool", "noteForNextTurn", "history", "isDurableSession", "logger"],
  config: { tools: { [TODO_TOOL]: todoSection } },
  frontmatter: { todo_style: z.enum(TODO_STYLES) },
  setup(host, config) {
    const { events } = host;
    const section = config.tools.todo;
    const store = createPlanStore(section.max_plans);
    const styleOf = (agent: AgentDefinition): TodoStyle => (agent.settings.todo_style as TodoStyle | undefined) ?? section.style;
    // A plan changed: the event, and a notice to the session's open streams (a UI's plan panel), the same for both styles.
    const updated = (agentId: string, sessionKey: string, update: PlanUpdate, call?: { turnId: string; callId: string }) => {
      events.emit("plan.updated", { agentId, sessionKey, ...call, ...update });
      host.notify(sessionKey, "plan.updated", { agent: agentId, session_key: sessionKey, style: update.style, plan: update.phases });
    };
    // A failed call (either style): the model's next turn is told, once, and the user's views that the plan may be stale.
    const failures = todoFailures({
      remind: (agentId, sessionKey, note) => host.noteForNextTurn(agentId, sessionKey, note, TODO_REMINDER_TOPIC),
      notify: (agentId, sessionKey) => host.notify(sessionKey, "plan.failed", { agent: agentId, session_key: sessionKey, message: TODO_FAILED }),
    });
    events.on("tool.end", (e) => {
      if (e.tool === TODO_TOOL) failures.ended(e.agentId, e.sessionKey, e.isError);
    });
    // What the tools publish (`ctx.publish`) is the plan after their change.
    events.on("tool.update", (e) => {
      if (e.tool === TODO_TOOL) {
        updated(e.agentId, e.sessionKey, planUpdate(e.details as PlanUpdate | ListPlanChange), { turnId: e.turnId, callId: e.callId });
      }
    });
    // Phases plans of sessions kept on disk come back after a restart (resume.ts); list plans are the process's only.
    const resume = planResume({
      store,
      tool: TODO_TOOL,
      isDurable: (sessionKey) => host.isDurableSession(sessionKey),
      isPhases: (agentId) => styleOf(host.agent(agentId)) === "phases",
      history: async (sessionKey) => (await host.history.page(sessionKey, HISTORY_READ)).messages,
      warn: (message) => host.logger.warn(message),
    });
    const phasesTool = createPhasesTool(phasesView(store), {
      isDurable: (sessionKey) => host.isDurableSession(sessionKey),
      resume: (agentId, sessionKey) => resume.resume(agentId, sessionKey),
    });

    const todosRoute: FeatureRoute = {
      method: "GET",
      path: "/v1/sessions/:key/todos",
      handle: async ({ params, query }) => {
        const key = params.key!;
        // The agent in the key, or another one named (a delegated subagent's plan).
        const agent = host.agent(query("agent") ?? agentOfKey(key)!);
        if (styleOf(agent) === "phases") {
          await resume.resume(agent.id, key);
          return { json: { style: "phases", phases: planAsPhases(resume.shown(agent.id, key)) } };
        }
        return { jsonText: readTodos(listView(store), agent.id, key) };
      },
    };

    return {
      tools: [createTodoTool(listView(store))],
      origin: () => BUILT_IN_ORIGIN,
      toolFor: (tool, agent) => (styleOf(agent) === "phases" ? phasesTool : tool),
      sessionState: [store, failures, resume],
      commands: [
        todoCommand({
          store,
          updated,
          styleOf: (agentId) => styleOf(host.agent(agentId)),
          hasTodo: (agentId) => host.hasTool(agentId, TODO_TOOL),
          noteForModel: (agentId, sessionKey, note) => host.noteForNextTurn(agentId, sessionKey, note),
          resume: (agentId, sessionKey) => resume.resume(agentId, sessionKey),
          shown: (agentId, sessionKey) => resume.shown(agentId, sessionKey),
          kept: async (agentId, sessionKey, plan) => {
            if (styleOf(host.agent(agentId)) !== "phases" || !host.isDurableSession(sessionKey)) return;
            const phases = plan?.style === "phases" ? plan.phases : [];
            await host.history.append(sessionKey, [
              { role: "system", content: "The user changed the plan with /todo.", record: { type: TODO_RECORD, phases } },
            ]);
          },
        }),
      ],
      routes: [todosRoute],
      api: { plans: store } satisfies TodoApi,
    };
  },
});

/** What a todo tool published, as `plan.updated` carries it: a list-style plan as one phase `Todos`. */
function planUpdate(details: PlanUpdate | ListPlanChange): PlanUpdate {
  if (!("items" in details)) return details;
  return { style: "list", phases: listAsPhases(details.items), completedTasks: details.completed.map((content) => ({ phase: "Todos", content })) };
}
