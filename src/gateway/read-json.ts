import { RequestError, messageOf } from "../errors.js";

/** A request's body as JSON: `400 invalid_json` when it is empty or not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") throw new RequestError("invalid_json", "the body is empty; expected a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RequestError("invalid_json", `the body is not valid JSON: ${messageOf(error)}`);
  }
}
