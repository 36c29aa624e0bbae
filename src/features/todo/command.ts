import type { Command } from "../../port/command.js";
import type { PlanUpdate } from "./events.js";
import { parseListMarkdown, renderListMarkdown } from "./list/markdown.js";
import { SHARED_ERRORS } from "./messages.js";
import { parsePhasesMarkdown, renderPhasesMarkdown } from "./phases/markdown.js";
import { applyPhaseOp, formatErrors, newlyCompleted } from "./phases/ops.js";
import { type PhaseOpInput, normalisePhases } from "./phases/plan.js";
import { type SharedPlanStore, type StoredPlan, type TodoStyle, planAsPhases } from "./plans.js";
import { CapacityError } from "./store.js";

/**
 * `/todo` for the chat user (it never reaches the model): show the session's
 * plan as Markdown, replace it with `/todo edit` and Markdown on the next
 * lines, or apply one op (phases style). After a change the model's next
 * turn gets a short note with the new plan, once.
 */

export interface TodoCommandHost {
  store: SharedPlanStore;
  /** The plan of the session changed (for `plan.updated`). */
  updated(agentId: string, sessionKey: string, update: PlanUpdate): void;
  styleOf(agentId: string): TodoStyle;
  /** Whether the agent has the todo tool (config gate and allowlist). */
  hasTodo(agentId: string): boolean;
  /** Keeps the note for the session's next turn (replacing an older one). */
  noteForModel(agentId: string, sessionKey: string, note: string): void;
  /** Rebuilds the session's plan from its history when this process has none (after a restart). */
  resume?(agentId: string, sessionKey: string): Promise<void>;
  /** The plan as the user is shown it (a rebuilt plan whole, closed tasks too); default: the store's. */
  shown?(agentId: string, sessionKey: string): StoredPlan | undefined;
  /** The user changed the plan: keeps it where a restart finds it (a session kept on disk). */
  kept?(agentId: string, sessionKey: string, plan: StoredPlan | undefined): Promise<void>;
}

const USAGE = [
  "Usage:",
  "/todo — show the plan",
  "/todo edit — then the whole plan in Markdown on the next lines (# Phase, then - [ ] task; [/] in progress, [x] done, [-] dropped)",
  "/todo start|done|drop|rm <task> — change one task (phases style)",
  "/todo append <phase>: <task> — add a task at the end of a phase (phases style)",
].join("\n");

const SINGLE_OPS = new Set(["start", "done", "drop", "rm", "append"]);

/** What `/todo` shows of an empty plan (no tasks): said in words, with how to write one. */
export const EMPTY_PLAN = "The plan is empty.";

export function renderPlan(plan: StoredPlan | undefined, style: TodoStyle): string {
  if (plan?.style === "list" && plan.items.length > 0) return renderListMarkdown(plan.items);
  if (plan?.style === "phases" && plan.phases.some((phase) => phase.tasks.length > 0)) return renderPhasesMarkdown(plan.phases);
  const example = style === "list" ? "- [ ] a task" : "# A phase\n- [ ] a task";
  return `${EMPTY_PLAN} Write one with /todo edit and the plan in Markdown on the next lines:\n\n\`\`\`\n/todo edit\n${example}\n\`\`\``;
}

export function todoCommand(host: TodoCommandHost): Command {
  const changed = async (agentId: string, sessionKey: string, before: StoredPlan | undefined, style: TodoStyle, remark = ""): Promise<string> => {
    const after = host.store.read(agentId, sessionKey);
    await host.kept?.(agentId, sessionKey, after);
    const markdown = renderPlan(after, style);
    const phases = planAsPhases(after);
    const completedTasks = before?.style === "phases" && after?.style !== "list" ? newlyCompleted(before.phases, phases) : [];
    host.updated(agentId, sessionKey, { style, phases, completedTasks });
    host.noteForModel(agentId, sessionKey, `[The user changed your plan with /todo. This is the plan now; continue from it:]\n\n${markdown}`);
    return `Plan updated.${remark}\n\n${markdown}`;
  };

  const write = async (agentId: string, sessionKey: string, plan: StoredPlan, style: TodoStyle, remark?: string): Promise<string> => {
    const before = host.store.read(agentId, sessionKey);
    try {
      await host.store.write(agentId, sessionKey, plan);
    } catch (error) {
      if (error instanceof CapacityError) return `Nothing changed: ${SHARED_ERRORS.capacity}.`;
      throw error;
    }
    return changed(agentId, sessionKey, before, style, remark);
  };

  const edit = (agentId: string, sessionKey: string, style: TodoStyle, markdown: string): Promise<string> | string => {
    if (markdown.trim() === "") return `Put the new plan on the lines after /todo edit.\n\n${USAGE}`;
    if (style === "list") {
      const current = host.store.read(agentId, sessionKey);
      const { items, errors, headings } = parseListMarkdown(markdown, current?.style === "list" ? current.items : []);
      if (errors.length > 0) return `Nothing changed:\n${errors.join("\n")}`;
      // A list has no phases: the person is told their headings were not kept, and how to keep them.
      const remark =
        headings.length === 0
          ? ""
          : ` This agent keeps its plan as one list, so the headings (${headings.map((name) => `"${name}"`).join(", ")}) were not kept; todo_style: phases in its AGENT.md keeps phases.`;
      return write(agentId, sessionKey, { style, items }, style, remark);
    }
    const { phases, errors } = parsePhasesMarkdown(markdown);
    if (errors.length > 0) return `Nothing changed:\n${errors.join("\n")}`;
    return write(agentId, sessionKey, { style, phases: normalisePhases(phases) }, style);
  };

  const single = async (agentId: string, sessionKey: string, op: string, rest: string): Promise<string> => {
    let input: PhaseOpInput;
    if (op === "append") {
      const colon = rest.indexOf(":");
      if (colon < 0) return `Say where: /todo append <phase>: <task>\n\n${USAGE}`;
      input = { op, phase: rest.slice(0, colon).trim(), items: [rest.slice(colon + 1).trim()] };
    } else {
      if (rest === "") return `Say which task: /todo ${op} <task>\n\n${USAGE}`;
      input = { op: op as PhaseOpInput["op"], task: rest };
    }
    const current = host.store.read(agentId, sessionKey);
    const applied = applyPhaseOp(current?.style === "phases" ? current.phases : [], input);
    if (!applied.ok) return `Nothing changed. ${formatErrors(applied.errors)}`;
    return write(agentId, sessionKey, { style: "phases", phases: applied.plan }, "phases");
  };

  return {
    name: "todo",
    usage: "/todo [edit | start|done|drop|rm <task> | append <phase>: <task>]",
    description: "show or change this session's plan (Markdown); the agent is told about your change",
    locked: true,
    run: async (ctx) => {
      if (!host.hasTodo(ctx.agentId)) {
        return "This agent has no todo tool, so it keeps no plan (turn it on with tools.todo.enabled, and list todo in the agent's tools if it has an allowlist).";
      }
      const style = host.styleOf(ctx.agentId);
      await host.resume?.(ctx.agentId, ctx.sessionKey);
      const [first = "", ...more] = ctx.args.split(/\r?\n/);
      const [word = "", ...words] = first.trim().split(/\s+/);
      const sub = word.toLowerCase();
      if (sub === "") return renderPlan((host.shown ?? host.store.read.bind(host.store))(ctx.agentId, ctx.sessionKey), style);
      // Line numbers in errors count from the first line of the Markdown (the line after "/todo edit").
      if (sub === "edit") return edit(ctx.agentId, ctx.sessionKey, style, (words.length ? [words.join(" "), ...more] : more).join("\n"));
      if (SINGLE_OPS.has(sub)) {
        if (style !== "phases") return "This agent keeps its plan as a list (tools.todo.style); change it with /todo edit.";
        return single(ctx.agentId, ctx.sessionKey, sub, [words.join(" "), ...more].join(" ").trim());
      }
      return `Unknown /todo command "${word}".\n\n${USAGE}`;
    },
  };
}
