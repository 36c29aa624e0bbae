import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

/**
 * HTML as text a model reads: the page's readable part (Mozilla's
 * Readability, the reader view of Firefox, over linkedom's DOM), as
 * Markdown (turndown) or as plain text with a line per block. Links and
 * images point where the page meant (absolute URLs); scripts, styles and
 * forms are gone. Loaded with the first HTML page web_fetch reads.
 */

type Doc = ReturnType<typeof parseHTML>["document"];
type Node = Doc["documentElement"];

/** What carries no text for a reader. */
const DROPPED = "script, style, noscript, template, iframe, object, embed, svg, canvas, input, button, select, textarea, link, meta";

/** Elements that start a line of their own in plain text. */
const BLOCKS = new Set([
  "ADDRESS",
  "ARTICLE",
  "ASIDE",
  "BLOCKQUOTE",
  "BR",
  "DD",
  "DETAILS",
  "DIV",
  "DL",
  "DT",
  "FIGCAPTION",
  "FIGURE",
  "FOOTER",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "HEADER",
  "HR",
  "LI",
  "MAIN",
  "NAV",
  "OL",
  "P",
  "PRE",
  "SECTION",
  "SUMMARY",
  "TABLE",
  "TD",
  "TH",
  "TR",
  "UL",
]);

function load(html: string, pageUrl: string): Doc {
  const { document } = parseHTML(html);
  for (const node of document.querySelectorAll(DROPPED)) node.remove();
  absolute(document, "a[href]", "href", pageUrl);
  absolute(document, "img[src]", "src", pageUrl);
  return document;
}

/** Relative links made absolute against the page; a link to anything but http(s) (javascript:, data:) loses its target. */
function absolute(document: Doc, selector: string, attribute: string, pageUrl: string): void {
  for (const element of document.querySelectorAll(selector)) {
    const value = element.getAttribute(attribute) ?? "";
    const url = URL.canParse(value, pageUrl) ? new URL(value, pageUrl) : undefined;
    if (url && (url.protocol === "http:" || url.protocol === "https:")) element.setAttribute(attribute, url.href);
    else element.removeAttribute(attribute);
  }
}

/** The readable part of the page (its article), else its whole body; with its title. */
function readable(html: string, pageUrl: string): { title: string; root: Node } {
  const document = load(html, pageUrl);
  const title = (document.querySelector("title")?.textContent ?? "").trim();
  try {
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
    if (article?.content) {
      const { document: inner } = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`);
      return { title: (article.title ?? title).trim(), root: inner.body as unknown as Node };
    }
  } catch {
    // a page Readability cannot read: the whole body is the text
  }
  const whole = load(html, pageUrl);
  return { title, root: (whole.body ?? whole.documentElement) as unknown as Node };
}

let turndown: TurndownService | undefined;

function markdownOf(root: Node): string {
  turndown ??= new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_" });
  return turndown.turndown(root as unknown as Parameters<TurndownService["turndown"]>[0]);
}

/** The page as Markdown: its title as a heading, then its readable part. */
export function htmlToMarkdown(html: string, pageUrl: string): string {
  const { title, root } = readable(html, pageUrl);
  const body = markdownOf(root).trim();
  const heading = title !== "" && !body.startsWith(`# ${title}`) ? `# ${title}\n\n` : "";
  return `${heading}${body}`.trim();
}

/** The page as plain text: its title, then a line per block of its readable part, blank lines dropped. */
export function htmlToText(html: string, pageUrl: string): string {
  const { title, root } = readable(html, pageUrl);
  const parts: string[] = [];
  const walk = (node: Node) => {
    for (const child of node.childNodes as unknown as Node[]) {
      if (child.nodeType === 3) parts.push((child.textContent ?? "").replace(/\s+/g, " "));
      else if (child.nodeType === 1) {
        const block = BLOCKS.has(child.nodeName);
        if (block) parts.push("\n");
        walk(child);
        if (block) parts.push("\n");
      }
    }
  };
  walk(root);
  const lines = parts
    .join("")
    .split("\n")
    .map((line) => line.replace(/[^\S\n]+/g, " ").trim())
    .filter((line) => line !== "");
  if (title !== "" && lines[0] !== title) lines.unshift(title);
  return lines.join("\n");
}
