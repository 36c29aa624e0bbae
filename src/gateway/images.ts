import { z } from "zod";
import { RequestError } from "../errors.js";
import { IMAGE_LIMITS, type ImageInput, imageProblem } from "../runtime/turn/images.js";
import { parseReporting, type PathPart, describeIssues, formatPath, jsonTypeOf, listProblems, quoted } from "../validation.js";

/**
 * Images in requests: `POST /v1/chat`'s `images` entries, and the content
 * parts of an OpenAI chat-completions message (`text` and `image_url`), made
 * into what the runtime takes: the text and the images of one message.
 */

/** One entry of `/v1/chat`'s `images` (and an OpenAI `image_url` object). */
export const imageSchema = z.strictObject({
  url: z.string().min(1),
  detail: z.enum(["auto", "low", "high"]).optional(),
});

const textPart = z.looseObject({ type: z.literal("text"), text: z.string() });
const imagePart = z.looseObject({ type: z.literal("image_url"), image_url: z.looseObject(imageSchema.shape) });

/**
 * An OpenAI chat-completions message's `content` (a string, or a list of
 * `text` and `image_url` parts) as the runtime's message: its text parts
 * joined by blank lines, its images in order. Everything is checked here
 * (part shapes, each image's kind and size, how many), and a problem is a 400
 * `invalid_request` naming its JSON path under `at`, the content's own path
 * in the request (`["messages", 3, "content"]`). Other part types (audio,
 * files) are refused.
 */
export function fromOpenAIContent(content: unknown, at: readonly PathPart[]): { text: string; images: ImageInput[] } {
  if (typeof content === "string") return { text: content, images: [] };
  const where = formatPath(at);
  if (!Array.isArray(content)) throw new RequestError("invalid_request", `${where}: expected a string or a list of "text" and "image_url" parts`);
  const texts: string[] = [];
  const images: ImageInput[] = [];
  const problems: string[] = [];
  content.forEach((part: unknown, i) => {
    const type = (part as { type?: unknown } | null)?.type;
    const schema = type === "text" ? textPart : type === "image_url" ? imagePart : undefined;
    if (!schema) {
      problems.push(
        `${formatPath([...at, i, "type"])}: ${typeof type === "string" ? quoted(type, 40) : jsonTypeOf(type ?? null)} parts are not taken (only "text" and "image_url")`,
      );
      return;
    }
    const parsed = parseReporting(schema, part);
    if (!parsed.success) {
      problems.push(...describeIssues(parsed.error, { prefix: [...at, i] }));
      return;
    }
    if (parsed.data.type === "text") {
      texts.push(parsed.data.text);
      return;
    }
    const { url, detail } = parsed.data.image_url;
    const problem = imageProblem(url);
    if (problem) problems.push(`${formatPath([...at, i, "image_url", "url"])}: ${problem}`);
    images.push({ url, ...(detail ? { detail } : {}) });
  });
  if (images.length > IMAGE_LIMITS.perMessage) problems.push(`${where}: ${images.length} images; a message may carry at most ${IMAGE_LIMITS.perMessage}`);
  if (problems.length > 0) throw new RequestError("invalid_request", listProblems(problems));
  return { text: texts.join("\n\n"), images };
}
