/**
 * The phases tool's JSON arguments, checked for shape only: which fields
 * exist and their JSON types. What the fields mean (missing task, unknown
 * phase...) is checked by the op itself, so that `/todo` commands built
 * from text get the same messages as the model.
 *
 * A field given as `null` is an invalid argument, not an absent one, as in
 * the reference (`{"op":"done","task":null}` must not complete every
 * task). Every shape error is reported, not just the first.
 */
import { PHASE_OPS, type PhaseOpInput, type PhaseOpName } from "./plan.js";

export const PHASE_ARG_KEYS = ["op", "task", "phase", "items", "list"] as const;
const KEYS = new Set<string>(PHASE_ARG_KEYS);
const LIST_KEYS = new Set(["phase", "items"]);
const OPS = new Set<string>(PHASE_OPS);

export const PHASE_ARG_ERRORS = {
  op: `op must be one of ${PHASE_OPS.join(", ")}`,
  task: "task must be a string",
  phase: "phase must be a string",
  items: "items must be an array of strings",
  list: 'list must be an array of {"phase", "items"} objects',
} as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");

/** Reads the op from the model's parsed JSON arguments, or lists what is wrong with them. */
export function parsePhaseArgs(args: unknown): { ok: true; input: PhaseOpInput } | { ok: false; errors: string[] } {
  const raw = isPlainObject(args) ? args : {};
  const errors: string[] = [];
  for (const key of Object.keys(raw)) if (!KEYS.has(key)) errors.push(`Unknown field "${key}"`);
  const present = (key: string) => raw[key] !== undefined;

  if (typeof raw.op !== "string" || !OPS.has(raw.op)) errors.push(PHASE_ARG_ERRORS.op);
  if (present("task") && typeof raw.task !== "string") errors.push(PHASE_ARG_ERRORS.task);
  if (present("phase") && typeof raw.phase !== "string") errors.push(PHASE_ARG_ERRORS.phase);
  if (present("items") && !isStringArray(raw.items)) errors.push(PHASE_ARG_ERRORS.items);
  if (present("list") && !isList(raw.list)) errors.push(PHASE_ARG_ERRORS.list);
  if (errors.length) return { ok: false, errors };

  const input: PhaseOpInput = { op: raw.op as PhaseOpName };
  if (present("task")) input.task = raw.task as string;
  if (present("phase")) input.phase = raw.phase as string;
  if (present("items")) input.items = [...(raw.items as string[])];
  if (present("list")) {
    input.list = (raw.list as Record<string, unknown>[]).map((entry) => ({
      ...(typeof entry.phase === "string" ? { phase: entry.phase } : {}),
      ...(isStringArray(entry.items) ? { items: [...entry.items] } : {}),
    }));
  }
  return { ok: true, input };
}

function isList(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        isPlainObject(entry) &&
        Object.keys(entry).every((key) => LIST_KEYS.has(key)) &&
        (entry.phase === undefined || typeof entry.phase === "string") &&
        (entry.items === undefined || isStringArray(entry.items)),
    )
  );
}
