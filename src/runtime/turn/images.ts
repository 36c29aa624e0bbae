import { RequestError } from "../../errors.js";

/**
 * Images a user sends with a message: by `http(s)://` URL (the model's
 * provider fetches it) or as a `data:image/<png|jpeg|gif|webp>;base64,...`
 * URL. Checked before anything runs, so a bad image is a 400 naming it, never
 * a provider error; the limits are fixed (README, "Security and limits").
 */

export interface ImageInput {
  url: string;
  /** OpenAI's resolution hint; other providers ignore it. */
  detail?: "auto" | "low" | "high";
}

export const IMAGE_LIMITS = {
  /** Images in one message. */
  perMessage: 8,
  /** Bytes of one image sent as a data URL, decoded (what the Anthropic API takes at most). */
  dataBytes: 5 * 1024 * 1024,
  /** Characters of an http(s) URL. */
  urlChars: 8192,
} as const;

/** The image types both providers take. */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

const DATA_URL = /^data:([^;,]*)(;base64)?,(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What is wrong with an image URL, or undefined when it can be sent. */
export function imageProblem(url: string): string | undefined {
  if (url.startsWith("data:")) {
    const data = DATA_URL.exec(url);
    if (!data) return "not a data URL (expected data:image/png;base64,...)";
    const type = data[1]!.toLowerCase();
    if (!(IMAGE_TYPES as readonly string[]).includes(type))
      return `data URL of type ${JSON.stringify(type || "text/plain")}; expected one of ${IMAGE_TYPES.join(", ")}`;
    if (!data[2]) return "a data URL must be base64 (data:image/png;base64,...)";
    const payload = data[3]!;
    const bytes = Math.floor((payload.length * 3) / 4) - (payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0);
    if (bytes > IMAGE_LIMITS.dataBytes) return `the image is ${bytes} bytes, over the ${IMAGE_LIMITS.dataBytes} (5 MiB) an image may hold`;
    if (payload.length === 0 || payload.length % 4 !== 0 || !BASE64.test(payload)) return "the data URL's base64 is not valid";
    return undefined;
  }
  if (url.length > IMAGE_LIMITS.urlChars) return `the URL is over ${IMAGE_LIMITS.urlChars} characters`;
  if (!URL.canParse(url)) return "not a URL (expected https://... or data:image/...;base64,...)";
  const protocol = new URL(url).protocol;
  if (protocol !== "http:" && protocol !== "https:") return `${protocol.slice(0, -1)} URLs are not taken; expected https://... or data:image/...;base64,...`;
  return undefined;
}

/** Throws a 400 `invalid_request` naming each bad image as `images[i].url`. */
export function checkImages(images: readonly ImageInput[]): void {
  if (images.length > IMAGE_LIMITS.perMessage) {
    throw new RequestError("invalid_request", `images: ${images.length} images; a message may carry at most ${IMAGE_LIMITS.perMessage}`);
  }
  const problems = images.flatMap((image, i) => {
    const problem = imageProblem(image.url);
    return problem ? [`images[${i}].url: ${problem}`] : [];
  });
  if (problems.length > 0) throw new RequestError("invalid_request", problems.join("; "));
}
