import type { Context } from "hono";
import { z } from "zod";
import { RequestError } from "../errors.js";
import { DECISIONS, type PendingApproval, type PendingQuestion } from "../port/approvals.js";
import type { Runtime } from "../runtime/runtime.js";
import { parseReporting, problemsLine } from "../validation.js";
import { readJson } from "./read-json.js";

/** `POST .../approvals/<id>`'s body. */
const decisionBody = z.strictObject({ decision: z.enum(DECISIONS) });

/**
 * Who a decision came from, as the history records it: the chat page says
 * so with `X-PicoClaw-Client: page`; anything else is the API.
 */
const clientOf = (c: Context) => (c.req.header("x-picoclaw-client") === "page" ? "page" : "api");

export const approvalJson = (a: PendingApproval) => ({
  id: a.id,
  agent: a.agentId,
  tool: a.tool,
  arguments: a.arguments,
  session_key: a.sessionKey,
  ...(a.callSessionKey === a.sessionKey ? {} : { call_session_key: a.callSessionKey }),
  requested_at: new Date(a.requestedAt).toISOString(),
  expires_at: new Date(a.expiresAt).toISOString(),
});

const questionJson = (q: PendingQuestion) => ({
  id: q.id,
  agent: q.agentId,
  question: q.question,
  options: q.options,
  session_key: q.sessionKey,
  expires_at: new Date(q.expiresAt).toISOString(),
});

/** `GET /v1/sessions/<key>/approvals`: the calls (and ask_user questions) waiting for a person in the session, oldest first. */
export function listApprovals(c: Context, runtime: Runtime, key: string): Response {
  return c.json({ approvals: runtime.approvals.pending(key).map(approvalJson), questions: runtime.approvals.questions(key).map(questionJson) });
}

/**
 * `POST /v1/sessions/<key>/approvals/<id>` with `{"decision": "allow" |
 * "deny" | "allow_session"}`. An id this session has no request by is 404
 * (another session's too: ids are not guessed across sessions); one decided
 * before is 409.
 */
export async function decideApproval(c: Context, runtime: Runtime, key: string, id: string): Promise<Response> {
  const body = parseReporting(decisionBody, await readJson(c.req.raw));
  if (!body.success) throw new RequestError("invalid_request", problemsLine(body.error));
  const outcome = runtime.approvals.decide(key, id, body.data.decision, clientOf(c));
  if (outcome.result === "unknown") throw new RequestError("not_found", `session ${key} has no approval request ${JSON.stringify(id)}`);
  if (outcome.result === "settled") {
    throw new RequestError("conflict", `approval request ${id} was decided already (${outcome.decision} by ${outcome.by}); a decision is final`);
  }
  return c.json({ id, decision: body.data.decision, tool: outcome.approval.tool });
}
