import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { h } from "./dom.js";

/**
 * Model text as Markdown, the way a chat app shows it: marked makes the
 * HTML (GitHub's dialect: tables, task lists, strikethrough; a line break
 * is a break), DOMPurify turns it into nodes, keeping only the tags and
 * attributes Markdown needs. HTML the model writes is shown as text, never
 * as markup; images are links (the page loads nothing from elsewhere);
 * links keep only http(s) and mailto targets (`javascript:`, `data:` and
 * relative ones lose their target) and open in a new tab with
 * `rel="noopener noreferrer"`. Code blocks get their language and a copy
 * button. The HTML is parsed inside DOMPurify only, under its own Trusted
 * Types policy (the page's CSP allows that one policy and no other).
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    // Raw HTML in the text is text.
    html: (token: Tokens.HTML | Tokens.Tag) => escapeHtml(token.text),
    // An image would be a request to wherever the model says: a link a person can choose to follow.
    image: (token: Tokens.Image) => `<a href="${escapeHtml(token.href)}">${escapeHtml(token.text || "image")}</a>`,
  },
});

const ALLOWED_TAGS = [
  ..."p br hr strong em del s code pre blockquote ul ol li a table thead tbody tr th td input".split(" "),
  ..."h1 h2 h3 h4 h5 h6".split(" "),
];
const SAFE_LINK = /^(?:https?:|mailto:)/i;

const purify = DOMPurify(window);
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node instanceof HTMLAnchorElement) {
    if (SAFE_LINK.test(node.getAttribute("href") ?? "")) {
      node.target = "_blank";
      node.rel = "noopener noreferrer";
    } else node.removeAttribute("href");
  }
  // Only a task list's box: disabled, as marked makes it.
  if (node instanceof HTMLInputElement) {
    if (node.type === "checkbox") node.disabled = true;
    else node.remove();
  }
});

const PURIFY_CONFIG = {
  ALLOWED_TAGS,
  ALLOWED_ATTR: ["href", "title", "class", "start", "align", "type", "checked", "disabled"],
  ALLOW_DATA_ATTR: false,
  ALLOWED_URI_REGEXP: SAFE_LINK,
  RETURN_DOM_FRAGMENT: true as const,
};

/** The Markdown as nodes, into `target` (its children replaced). */
export function renderMarkdown(target: HTMLElement, text: string): void {
  const html = marked.parse(text, { async: false });
  const fragment = purify.sanitize(html, PURIFY_CONFIG);
  for (const pre of fragment.querySelectorAll("pre")) {
    // The block takes the <pre> in, so it goes where the <pre> was.
    const parent = pre.parentNode!;
    const next = pre.nextSibling;
    parent.insertBefore(codeBlock(pre), next);
  }
  target.replaceChildren(fragment);
}

/** A block of code: its language (from marked's `language-x` class) and a copy button above it. */
function codeBlock(pre: HTMLPreElement): HTMLElement {
  const code = pre.querySelector("code");
  const language = /(?:^|\s)language-([\w+#.-]{1,32})/.exec(code?.className ?? "")?.[1] ?? "";
  const copy = h("button", { class: "copy", text: "Copy", attrs: { type: "button", "aria-label": language ? `Copy the ${language} code` : "Copy the code" } });
  copy.addEventListener("click", () => {
    const done = (label: string) => {
      copy.textContent = label;
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    };
    navigator.clipboard?.writeText((code?.textContent ?? pre.textContent ?? "").replace(/\n$/, "")).then(
      () => done("Copied"),
      () => done("Select and copy"),
    ) ?? done("Select and copy");
  });
  return h("div", { class: "code-block" }, h("div", { class: "code-head" }, h("span", { class: "lang", text: language || "text" }), copy), pre);
}

/** Whether a text is JSON (an object or an array): shown as a code block, not read as Markdown. */
export function isJsonText(text: string): boolean {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/** A tool's output for the user: JSON as a json code block, any other text as Markdown. */
export function renderToolText(target: HTMLElement, text: string): void {
  if (!isJsonText(text)) {
    renderMarkdown(target, text);
    return;
  }
  const pretty = JSON.stringify(JSON.parse(text), null, 2);
  const code = h("code", { class: "language-json", text: pretty });
  target.replaceChildren(codeBlock(h("pre", {}, code)));
}
