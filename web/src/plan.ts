import { h } from "./dom.js";

export interface PlanTask {
  content: string;
  status: string;
  /** A list-style item's priority (`high`, `medium`, `low`); shown unless medium. */
  priority?: string;
}

export interface PlanPhase {
  name: string;
  tasks: PlanTask[];
}

/** How each status is drawn: the checkbox's state, and what a screen reader says. */
const STATUSES: Readonly<Record<string, { checked: "true" | "false" | "mixed"; label: string }>> = {
  pending: { checked: "false", label: "pending" },
  in_progress: { checked: "mixed", label: "in progress" },
  completed: { checked: "true", label: "completed" },
  abandoned: { checked: "false", label: "abandoned" },
};

/**
 * A plan as `GET .../todos` answers it, as phases: the phases style as it
 * is, a list-style plan as one phase `Todos` (canceled items as abandoned),
 * the shape `plan.updated` carries for both styles.
 */
export function phasesOfTodos(json: unknown): PlanPhase[] {
  const body = json as { style?: unknown; phases?: unknown; todos?: unknown };
  if (Array.isArray(body.phases)) return body.phases as PlanPhase[];
  if (!Array.isArray(body.todos) || body.todos.length === 0) return [];
  const tasks = (body.todos as { content: string; status?: string; priority?: string }[]).map((todo) => ({
    content: todo.content,
    status: todo.status === "canceled" ? "abandoned" : (todo.status ?? "pending"),
    ...(todo.priority ? { priority: todo.priority } : {}),
  }));
  return [{ name: "Todos", tasks }];
}

export interface PlanElements {
  root: HTMLElement;
  empty: HTMLElement;
  /** Says that a todo call failed, so the plan drawn may be stale (until the next plan is drawn). */
  stale: HTMLElement;
  count: HTMLElement;
  editor: HTMLDetailsElement;
  markdown: HTMLTextAreaElement;
  save: HTMLButtonElement;
  result: HTMLElement;
}

/** How `/todo` begins its answer for a plan with no task. */
const EMPTY_PLAN = "The plan is empty.";

/** What a save did, in words: how many phases and tasks the plan has now, and what `/todo edit` remarked (headings a list did not keep). */
function savedText(first: string, markdown: string): string {
  if (markdown.startsWith(EMPTY_PLAN)) return "Saved: the plan is empty now.";
  const lines = markdown.split("\n");
  const phases = lines.filter((line) => /^#{1,6}\s/.test(line)).length;
  const tasks = lines.filter((line) => /^\s*[-*+]\s/.test(line)).length;
  const remark = first.replace(/^Plan updated\.\s*/, "");
  const shape = `${phases} phase${phases === 1 ? "" : "s"}, ${tasks} task${tasks === 1 ? "" : "s"}`;
  return `Saved: ${shape}.${remark ? ` ${remark}` : ""}`;
}

/** Sends a slash command for the plan and resolves with its reply (`/todo`, `/todo edit ...`). */
export type PlanCommand = (text: string) => Promise<string>;

/**
 * The plan panel: the session's plan, phase by phase, each task's status
 * drawn as a checkbox (empty: pending, half: in progress, ticked: completed,
 * struck through: abandoned), redrawn whole on every change. Below it, the
 * plan as Markdown to edit, sent as `/todo edit`; `Line N:` errors show
 * under the box and change nothing.
 */
export class PlanPanel {
  constructor(
    private readonly els: PlanElements,
    private readonly command: PlanCommand,
  ) {
    els.editor.addEventListener("toggle", () => {
      if (els.editor.open) void this.loadMarkdown();
    });
    els.save.addEventListener("click", () => void this.save());
    els.markdown.addEventListener("input", () => (els.markdown.dataset.dirty = "yes"));
    els.markdown.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        void this.save();
      }
    });
  }

  /** Whether the open session's agent has the todo tool: without it there is no plan to show or edit, and the panel says so. */
  setAvailable(available: boolean): void {
    this.els.empty.textContent = available ? "No plan yet." : "This agent has no todo tool, so it keeps no plan.";
    this.els.editor.hidden = !available;
    if (!available) this.els.editor.open = false;
  }

  render(phases: readonly PlanPhase[]): void {
    this.els.stale.hidden = true;
    const tasks = phases.flatMap((phase) => phase.tasks);
    this.els.root.replaceChildren(...phases.map((phase) => this.phase(phase)));
    this.els.empty.hidden = phases.length > 0;
    const done = tasks.filter((task) => task.status === "completed").length;
    this.els.count.textContent = tasks.length > 0 ? `${done}/${tasks.length}` : "";
  }

  /** A todo call failed (`plan.failed`): the plan drawn stays, marked as possibly stale until the next one is drawn. */
  failed(message: string): void {
    this.els.stale.textContent = message;
    this.els.stale.hidden = false;
  }

  clear(): void {
    this.render([]);
    this.els.result.hidden = true;
    this.els.markdown.value = "";
    this.els.markdown.dataset.dirty = "";
    this.els.editor.open = false;
  }

  private phase(phase: PlanPhase): HTMLElement {
    const done = phase.tasks.filter((task) => task.status === "completed").length;
    return h(
      "section",
      { class: "phase" },
      h("h3", {}, h("span", { class: "phase-name", text: phase.name }), h("span", { class: "progress", text: `${done}/${phase.tasks.length}` })),
      h("ul", { class: "tasks" }, ...phase.tasks.map((task) => this.task(task))),
    );
  }

  private task(task: PlanTask): HTMLElement {
    const status = STATUSES[task.status] ?? { checked: "false", label: task.status };
    return h(
      "li",
      { class: `task ${task.status}`, attrs: { "data-status": task.status } },
      h("span", {
        class: "box",
        attrs: { role: "checkbox", "aria-checked": status.checked, "aria-disabled": "true", "aria-label": `${task.content}: ${status.label}` },
      }),
      h("span", { class: "task-text", text: task.content }),
      task.priority && task.priority !== "medium" ? h("span", { class: `priority ${task.priority}`, text: task.priority }) : null,
    );
  }

  private async loadMarkdown(): Promise<void> {
    try {
      const reply = await this.command("/todo");
      // An empty plan is said in words: the box starts empty, with an example as its placeholder.
      const markdown = reply.startsWith(EMPTY_PLAN) ? "" : reply;
      // Not over what the person started typing.
      if (this.els.editor.open && this.els.markdown.dataset.dirty !== "yes") this.els.markdown.value = markdown;
    } catch (error) {
      this.showResult(String(error instanceof Error ? error.message : error), true);
    }
  }

  private async save(): Promise<void> {
    this.els.save.disabled = true;
    try {
      const reply = await this.command(`/todo edit\n${this.els.markdown.value}`);
      const failed = !reply.startsWith("Plan updated.");
      const [first = "", ...rest] = reply.split("\n\n");
      const markdown = rest.join("\n\n");
      this.showResult(failed ? reply : savedText(first, markdown), failed);
      if (!failed) {
        this.els.markdown.dataset.dirty = "";
        this.els.markdown.value = markdown.startsWith(EMPTY_PLAN) ? "" : markdown;
      }
    } catch (error) {
      this.showResult(String(error instanceof Error ? error.message : error), true);
    } finally {
      this.els.save.disabled = false;
    }
  }

  private showResult(text: string, failed: boolean): void {
    this.els.result.textContent = text;
    this.els.result.classList.toggle("error", failed);
    this.els.result.hidden = false;
  }
}
