import { RequestError, messageOf } from "../errors.js";

/** Refuses bytes that are not UTF-8 (a replacement character would stand in for them, changing what the client sent). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A request's body as JSON: `400 invalid_json` when it is empty, not UTF-8 or not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const bytes = await request.arrayBuffer();
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new RequestError("invalid_json", "the body is not valid UTF-8");
  }
  if (text.trim() === "") throw new RequestError("invalid_json", "the body is empty; expected a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RequestError("invalid_json", `the body is not valid JSON: ${messageOf(error)}`);
  }
}
