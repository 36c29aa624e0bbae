/**
 * The phases tool's success text: what the model reads after each op. Three
 * parts, always in this order:
 *
 *     Remaining tasks:
 *     - Write tests (in_progress, phase "Build")
 *     - Ship (pending, phase "Release")
 *     Current phase "Build": 1/3 completed, 1 dropped
 *     Plan:
 *     Build (1/3 completed, 1 dropped)
 *       [x] Design
 *       [/] Write tests
 *       [-] Benchmark
 *     Release (0/1 completed)
 *       [ ] Ship
 *
 * Contents are shown verbatim (they are one line each), since ops find tasks
 * by their exact text. The current phase is the one holding the task in
 * progress, else the first with an open task; when no task is open the text
 * says so instead.
 */
import { STATUS_MARKERS } from "../markdown.js";
import { type Phase, type PhasePlan, isOpen } from "./plan.js";

function progress(phase: Phase): string {
  const completed = phase.tasks.filter((t) => t.status === "completed").length;
  const dropped = phase.tasks.filter((t) => t.status === "abandoned").length;
  return `${completed}/${phase.tasks.length} completed${dropped ? `, ${dropped} dropped` : ""}`;
}

function currentPhase(plan: PhasePlan): Phase | undefined {
  return plan.find((p) => p.tasks.some((t) => t.status === "in_progress")) ?? plan.find((p) => p.tasks.some(isOpen));
}

/** The remaining tasks, the current phase's progress and the plan as a tree. */
export function describePlan(plan: PhasePlan): string {
  const remaining = plan.flatMap((phase) => phase.tasks.filter(isOpen).map((task) => `- ${task.content} (${task.status}, phase "${phase.name}")`));
  const current = currentPhase(plan);
  const lines = [
    remaining.length ? "Remaining tasks:" : "Remaining tasks: none",
    ...remaining,
    current ? `Current phase "${current.name}": ${progress(current)}` : "Every task is completed or dropped.",
    "Plan:",
  ];
  for (const phase of plan) {
    lines.push(`${phase.name} (${progress(phase)})`);
    for (const task of phase.tasks) lines.push(`  ${STATUS_MARKERS[task.status]} ${task.content}`);
  }
  return lines.join("\n");
}
