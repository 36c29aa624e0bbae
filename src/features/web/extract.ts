/**
 * What web_fetch makes of a body, by its type, with PicoClaw's `extractor`
 * names: `json` (pretty-printed), `markdown` or `text` (HTML, by
 * `tools.web.format`), `raw` (any other text, as it is, and JSON that does
 * not parse). The HTML reader is imported with the first HTML page.
 */

export type Extractor = "json" | "markdown" | "text" | "raw";
export type HtmlFormat = "markdown" | "plaintext";

export interface Extracted {
  readonly extractor: Extractor;
  readonly text: string;
}

/** A body web_fetch does not read as text (the message is the tool's error result). */
export class BinaryBody extends Error {
  override readonly name = "BinaryBody";
}

/** The media type and charset of a Content-Type header (lower case; the media type empty when there is none). */
export function contentType(header: string | undefined): { media: string; charset: string | undefined } {
  const [media = "", ...params] = (header ?? "").split(";");
  const charset = params
    .map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(param)?.[1])
    .find((value) => value !== undefined)
    ?.toLowerCase();
  return { media: media.trim().toLowerCase(), charset };
}

const isJson = (media: string) => media === "application/json" || /^application\/[\w.+-]+\+json$/.test(media) || media === "text/json";
const isHtml = (media: string) => media === "text/html" || media === "application/xhtml+xml";
/** Types whose bytes are not text: images, sound, video, archives, fonts, PDF... */
const isBinaryType = (media: string) =>
  /^(image|audio|video|font)\//.test(media) ||
  /^application\/(octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|vnd\.|msword|wasm|x-protobuf|protobuf)/.test(media);

/** PicoClaw's sniff for HTML sent without its type: a body that begins `<!doctype` or `<html`. */
export function looksLikeHtml(text: string): boolean {
  const start = text.trimStart().slice(0, 9).toLowerCase();
  return start.startsWith("<!doctype") || start.startsWith("<html");
}

/** The body as text, in the charset the server named (UTF-8 when it named none or one this Node does not know). */
export function decode(body: Uint8Array, charset: string | undefined): string {
  if (charset !== undefined) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // an unknown label: read it as UTF-8, as most pages are
    }
  }
  return new TextDecoder("utf-8").decode(body);
}

export async function extract(body: Uint8Array, header: string | undefined, format: HtmlFormat, pageUrl: string): Promise<Extracted> {
  const { media, charset } = contentType(header);
  if (isBinaryType(media) || body.subarray(0, 8192).includes(0)) {
    throw new BinaryBody(`the response is not text (${media || "no Content-Type"}, ${body.length} bytes): web_fetch reads web pages, JSON and text`);
  }
  const text = decode(body, charset);
  if (isJson(media)) {
    try {
      return { extractor: "json", text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      return { extractor: "raw", text };
    }
  }
  if (isHtml(media) || looksLikeHtml(text)) {
    const html = await import("./html.js");
    return format === "markdown"
      ? { extractor: "markdown", text: html.htmlToMarkdown(text, pageUrl) }
      : { extractor: "text", text: html.htmlToText(text, pageUrl) };
  }
  return { extractor: "raw", text };
}
