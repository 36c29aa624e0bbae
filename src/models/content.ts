import type { ContentPart } from "./message.js";

/**
 * A user message's content as a model can take it. A model without vision
 * (its entry says `vision: false`; the gateway refuses images sent to it, but
 * a fallback or an older message may still hold some) gets a short note in
 * place of each image instead of a provider error.
 */

export const NO_VISION_NOTE = "[an image was here; this model cannot see images]";

export function visibleContent(content: string | ContentPart[], vision: boolean): string | ContentPart[] {
  if (vision || typeof content === "string") return content;
  return content.map((part): ContentPart => (part.type === "image_url" ? { type: "text", text: NO_VISION_NOTE } : part));
}

/** A `data:` URL's media type and base64 data, or undefined for any other URL. */
export function dataUrlParts(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!.toLowerCase(), data: match[2]! } : undefined;
}
