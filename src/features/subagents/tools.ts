import { z } from "zod";
import type { AgentDefinition } from "../../agents/agent.js";
import { abortReason } from "../../errors.js";
import { isSubagentKey } from "../../session/key.js";
import { joinSignals } from "../../signals.js";
import type { AnyTool } from "../../tools/registry.js";
import { type ToolContext, type ToolResult, defineTool, toolResult } from "../../tools/tool.js";
import type { SpawnedChildren } from "./spawned.js";
import type { ChildResult, Subturns } from "./subturns.js";

/** What the subagent tools need. */
export interface SubagentToolsHost {
  readonly subturns: Subturns;
  /** Spawned children until their result is handed on: what /clear stops and voids. */
  readonly spawned: SpawnedChildren;
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  /** `tools.subagent.deliver`: the child's reply reaches the user too. */
  readonly deliverReplies: boolean;
  /** The stop signal of the session a background child belongs to (/stop, shutdown), held until released. */
  holdStop(sessionKey: string): { signal: AbortSignal; release: () => void };
  /** A background child ended: tell the parent agent, whose answer goes to the user. */
  announce(parentKey: string, parentAgent: AgentDefinition, result: ChildResult): void;
  /** Background work the runtime must wait for on shutdown. */
  track(work: Promise<unknown>): void;
}

const label = z.string().trim().min(1).max(80).optional().describe("A short name for this piece of work, shown to the user.");
const task = z.string().min(1).describe("Everything the subagent needs: it does not see this conversation.");
const agentId = z.string().min(1).describe("The id of the agent to run the task as.");

/** The agent a child runs as, checked against the caller's allow_agents; or why not. */
function targetAgent(host: SubagentToolsHost, caller: AgentDefinition, id: string | undefined): AgentDefinition | string {
  if (id === undefined || id === caller.id) {
    return id === undefined ? caller : `agent "${id}" is yourself; use the subagent tool to hand work to a copy of yourself`;
  }
  const target = host.agents.get(id);
  const allowed = caller.allowAgents.includes("*") || caller.allowAgents.includes(id);
  if (!allowed) {
    const list = caller.allowAgents.filter((a) => a !== caller.id);
    return `you may not hand work to agent "${id}"; ${list.length ? `allowed: ${list.join(", ")}` : "your AGENT.md allow_agents lists no agents"}`;
  }
  if (!target) return `there is no agent "${id}"; agents: ${[...host.agents.keys()].join(", ")}`;
  return target;
}

function reportResult(result: ChildResult, deliver: boolean): ToolResult {
  if (result.outcome !== "done") {
    return toolResult.error(`Subagent "${result.label}" (${result.agentId}) did not finish (${result.outcome}): ${result.error ?? "no reason given"}`);
  }
  const reply = result.reply ?? "";
  const text = `Subagent "${result.label}" (${result.agentId}) finished. Its answer:\n\n${reply}`;
  return deliver ? { forLLM: text, forUser: reply, silent: false, isError: false } : toolResult.silent(text);
}

/** Runs a child now and waits for it: shared by `subagent` and `delegate`. */
async function runNow(host: SubagentToolsHost, ctx: ToolContext, target: AgentDefinition, text: string, name: string): Promise<ToolResult> {
  const caller = host.agents.get(ctx.agentId)!;
  const refusal = host.subturns.refusal(ctx.sessionKey, text);
  if (refusal) return toolResult.error(refusal);
  const release = await host.subturns.slot(ctx.sessionKey, ctx.signal);
  if (typeof release === "string") return toolResult.error(release);
  const { done } = host.subturns.start(
    {
      parentKey: ctx.sessionKey,
      parentCall: { turnId: ctx.turnId, callId: ctx.callId },
      parentAgent: caller,
      agent: target,
      task: text,
      label: name,
      signal: ctx.signal,
    },
    release,
  );
  const result = await done;
  if (ctx.signal.aborted) throw abortReason(ctx.signal);
  return reportResult(result, host.deliverReplies);
}

/** The agents `caller` may hand work to (its allow_agents; `*` for any), never itself. */
export function allowedTargets(caller: AgentDefinition, agents: ReadonlyMap<string, AgentDefinition>): AgentDefinition[] {
  const any = caller.allowAgents.includes("*");
  return [...agents.values()].filter((agent) => agent.id !== caller.id && (any || caller.allowAgents.includes(agent.id)));
}

/** The `agent_id` argument for a caller: only the agents it may name, each with what it is for. */
function targetSchema(targets: readonly AgentDefinition[]) {
  const ids = targets.map((agent) => agent.id) as [string, ...string[]];
  const listed = targets.map((agent) => (agent.description ? `${agent.id} (${agent.description})` : agent.id)).join("; ");
  return z.enum(ids).describe(`The agent to hand the task to: ${listed}.`);
}

export interface SubagentTools {
  tools: AnyTool[];
  /** The form of one of these tools an agent gets: `delegate` lists the agents it may name, and is not offered to an agent that may name none. */
  formFor(tool: AnyTool, agent: AgentDefinition): AnyTool | undefined;
}

export function createSubagentTools(host: SubagentToolsHost): SubagentTools {
  const subagent = defineTool({
    name: "subagent",
    description:
      "Hand a self-contained task to a subagent: a fresh copy of you with an empty conversation and its own plan. It runs now; you get its final answer back (the user does not see it unless you pass it on). Put everything it needs into the task. Use it for side work that would clutter this conversation, or run several in one step for independent tasks.",
    parameters: z.strictObject({ task, label }),
    enabledByDefault: true,
    timeoutMs: 0, // children have their own limit (agents.defaults.subturn.timeout_ms)
    execute: (args, ctx) => runNow(host, ctx, host.agents.get(ctx.agentId)!, args.task, args.label ?? "subagent"),
  });

  const delegateExecute = (args: { agent_id: string; task: string; label?: string | undefined }, ctx: ToolContext) => {
    const target = targetAgent(host, host.agents.get(ctx.agentId)!, args.agent_id);
    if (typeof target === "string") return toolResult.error(target);
    return runNow(host, ctx, target, args.task, args.label ?? target.id);
  };
  const delegateFor = (agentIds: z.ZodType<string>) =>
    defineTool({
      name: "delegate",
      description:
        "Hand a task to another agent (its own instructions, model and tools) and wait for its answer. Only the agents listed for agent_id may be used. The other agent does not see this conversation: put everything it needs into the task.",
      parameters: z.strictObject({ agent_id: agentIds, task, label }),
      enabledByDefault: true,
      timeoutMs: 0, // children have their own limit (agents.defaults.subturn.timeout_ms)
      execute: delegateExecute,
    });
  const delegate = delegateFor(agentId);

  const spawnExecute = async (args: { task: string; label?: string | undefined; agent_id?: string | undefined }, ctx: ToolContext): Promise<ToolResult> => {
    if (isSubagentKey(ctx.sessionKey)) {
      // A subagent's life is one turn: a result that arrives later could never reach it.
      return toolResult.error("spawn only works in the user's own conversation, not inside a subagent; use the subagent tool, which waits for the answer");
    }
    const caller = host.agents.get(ctx.agentId)!;
    const target = targetAgent(host, caller, args.agent_id);
    if (typeof target === "string") return toolResult.error(target);
    const refusal = host.subturns.refusal(ctx.sessionKey, args.task);
    if (refusal) return toolResult.error(refusal);
    const release = await host.subturns.slot(ctx.sessionKey, ctx.signal);
    if (typeof release === "string") return toolResult.error(release);
    const name = args.label ?? (target === caller ? "subagent" : target.id);
    // Stopped by /stop and shutdown (the session's stop switch), and by /clear (which also voids its result).
    const stop = host.holdStop(ctx.sessionKey);
    const child = host.spawned.add(ctx.sessionKey);
    const signals = joinSignals([stop.signal, child.signal]);
    const started = host.subturns.start(
      {
        parentKey: ctx.sessionKey,
        parentCall: { turnId: ctx.turnId, callId: ctx.callId },
        parentAgent: caller,
        agent: target,
        task: args.task,
        label: name,
        signal: signals.signal,
      },
      release,
    );
    const ended = started.done.finally(() => {
      signals.dispose();
      stop.release();
    });
    host.track(child.settle(ended, (result) => host.announce(ctx.sessionKey, caller, result)));
    return toolResult.silent(
      `Started subagent ${started.id} ("${name}", agent ${target.id}) in the background. Its result will arrive in this conversation when it finishes; you do not need to wait for it.`,
    );
  };
  const SPAWN_DESCRIPTION =
    "Start a subagent in the background and carry on at once. When it finishes, its result arrives in this conversation as a system note, and you then answer the user. Put everything it needs into the task.";
  const spawnFor = (agentIds: z.ZodType<string> | undefined) =>
    defineTool({
      name: "spawn",
      description: agentIds ? `${SPAWN_DESCRIPTION} Optionally run it as another agent (agent_id).` : SPAWN_DESCRIPTION,
      parameters: agentIds ? z.strictObject({ task, label, agent_id: agentIds.optional() }) : z.strictObject({ task, label }),
      enabledByDefault: true,
      notInSubagents: true,
      timeoutMs: 0, // children have their own limit (agents.defaults.subturn.timeout_ms)
      execute: spawnExecute,
    });
  const spawn = spawnFor(agentId);

  // One form per agent (its allowed agents do not change while the gateway runs).
  const forms = new Map<string, { delegate: AnyTool | undefined; spawn: AnyTool }>();
  const formsOf = (agent: AgentDefinition) => {
    let found = forms.get(agent.id);
    if (!found) {
      const targets = allowedTargets(agent, host.agents);
      const ids = targets.length > 0 ? targetSchema(targets) : undefined;
      found = { delegate: ids ? delegateFor(ids) : undefined, spawn: spawnFor(ids) };
      forms.set(agent.id, found);
    }
    return found;
  };

  return {
    tools: [subagent, spawn, delegate],
    formFor: (tool, agent) => (tool === delegate ? formsOf(agent).delegate : tool === spawn ? formsOf(agent).spawn : tool),
  };
}
