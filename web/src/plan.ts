import { h } from "./dom.js";

export interface PlanTask {
  content: string;
  status: string;
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
  const tasks = (body.todos as { content: string; status?: string }[]).map((todo) => ({
    content: todo.content,
    status: todo.status === "canceled" ? "abandoned" : (todo.status ?? "pending"),
  }));
  return [{ name: "Todos", tasks }];
}

export interface PlanElements {
  root: HTMLElement;
  empty: HTMLElement;
  count: HTMLElement;
  editor: HTMLDetailsElement;
  markdown: HTMLTextAreaElement;
  save: HTMLButtonElement;
  result: HTMLElement;
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
    const tasks = phases.flatMap((phase) => phase.tasks);
    this.els.root.replaceChildren(...phases.map((phase) => this.phase(phase)));
    this.els.empty.hidden = phases.length > 0;
    const done = tasks.filter((task) => task.status === "completed").length;
    this.els.count.textContent = tasks.length > 0 ? `${done}/${tasks.length}` : "";
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
    );
  }

  private async loadMarkdown(): Promise<void> {
    try {
      const markdown = await this.command("/todo");
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
      this.showResult(failed ? reply : "Saved.", failed);
      if (!failed) {
        this.els.markdown.dataset.dirty = "";
        this.els.markdown.value = reply.replace(/^Plan updated\.\n\n/, "");
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
