/**
 * Markdown, as models write it, in the HTML Telegram accepts (parse_mode
 * "HTML"): `**bold**`/`__bold__`, `*italic*`/`_italic_`, `~~strike~~`,
 * `` `code` ``, fenced code blocks (with their language), `[text](url)`
 * links (http, https, tg, mailto), headings as bold lines, `>` quotes as
 * blockquotes, list bullets as `•`. HTML comments (`<!-- ... -->` on one
 * line, outside code) are left out, as a Markdown viewer hides them.
 * Nothing inside code (spans and fenced blocks) is read as Markdown.
 * Everything else is text, with `&`, `<` and `>` escaped. What Telegram
 * still refuses (markers that cross each other) is sent again as plain
 * text by the sender.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const BULLET = /^(\s*)[-*+]\s+(.*)$/;
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,32}$/;
/** Private-use characters that mark where code spans and links go back in. */
const MARK = "\uE000";
const MARK_END = "\uE001";
const MARKED = /\uE000(\d+)\uE001/g;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const escapeAttribute = (text: string) => escapeHtml(text).replace(/"/g, "&quot;");

export function telegramHtml(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.split("\n");
  let quote: string[] = [];
  const endQuote = () => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      endQuote();
      const marker = fence[1]!;
      const code: string[] = [];
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trim().startsWith(marker)) code.push(lines[j++]!);
      const language = LANGUAGE.test(fence[2]!) ? ` class="language-${escapeAttribute(fence[2]!)}"` : "";
      out.push(`<pre><code${language}>${escapeHtml(code.join("\n"))}</code></pre>`);
      i = j;
      continue;
    }
    const quoted = QUOTE.exec(line);
    if (quoted) {
      quote.push(inline(quoted[1]!));
      continue;
    }
    endQuote();
    const heading = HEADING.exec(line);
    const bullet = BULLET.exec(line);
    if (heading) out.push(`<b>${inline(heading[1]!)}</b>`);
    else if (bullet && !/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) out.push(`${bullet[1]}• ${inline(bullet[2]!)}`);
    else out.push(inline(line));
  }
  endQuote();
  return out.join("\n");
}

/** One line's inline Markdown. Code spans and links are set aside first, so nothing inside them is read as a marker. */
function inline(text: string): string {
  const kept: string[] = [];
  const keep = (html: string) => `${MARK}${kept.push(html) - 1}${MARK_END}`;
  let rest = text.replace(/[\uE000\uE001]/g, (c) => `&#${c.charCodeAt(0)};`);
  rest = rest.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_all, _ticks: string, code: string) => keep(`<code>${escapeHtml(code.trim() || code)}</code>`));
  rest = rest.replace(/\s*<!--[\s\S]*?-->/g, "");
  rest = rest.replace(/\[([^\]\n]+)\]\(((?:https?:\/\/|tg:\/\/|mailto:)[^\s()]+)\)/g, (_all, label: string, url: string) =>
    keep(`<a href="${escapeAttribute(url)}">${escapeHtml(label)}</a>`),
  );
  rest = escapeHtml(rest).replace(/&amp;#(5734[45]);/g, "&#$1;");
  rest = rest
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<b>$1</b>")
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<b>$2</b>")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<s>$1</s>")
    .replace(/(^|[^*\w])\*([^\s*](?:[^*]*?[^\s*])?)\*(?![*\w])/g, "$1<i>$2</i>")
    .replace(/(^|[^_\w])_([^\s_](?:[^_]*?[^\s_])?)_(?![_\w])/g, "$1<i>$2</i>");
  return rest.replace(MARKED, (_all, index: string) => kept[Number(index)]!);
}
