import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";

/** One file of the chat page: its bytes and its media type. */
export interface PageFile {
  body: Uint8Array;
  type: string;
}

/** The chat page the gateway serves at `GET /`: its HTML, and the files it loads from `/assets/<name>`. */
export interface PageFiles {
  index: PageFile;
  /** By file name (`app.js`, `app.css`); no folders. */
  assets: ReadonlyMap<string, PageFile>;
}

/**
 * What the page may load and run: its own scripts, styles and images only,
 * no inline script or style, no plugins, no frames around it, forms posting
 * nowhere, and DOM sinks that parse HTML refused (Trusted Types): the one
 * policy that may make HTML is DOMPurify's (`dompurify`), which the page's
 * Markdown goes through; nothing else can create one.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types dompurify",
].join("; ");

/** Headers every answer of the page carries (README, "The web page"). */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  // The page is small and changes with the gateway: browsers ask each time, and a 304 saves the bytes.
  "cache-control": "no-cache",
};

const etagOf = (file: PageFile) => `"${createHash("sha256").update(file.body).digest("base64url").slice(0, 27)}"`;

/**
 * Serves the page: `GET /` and `GET /assets/<name>` (HEAD too), outside
 * `/v1`, so no token is asked for: the page holds no secret, and asks the
 * person for the token itself. The Host and Origin checks still apply.
 */
export function mountPage(app: Hono, page: PageFiles): void {
  // Each file's tag is made when it is first asked for: hashing the page at start delayed the gateway's first answer by ~4 ms.
  const tags = new Map<PageFile, string>();
  const serve = (c: Context, file: PageFile): Response => {
    let etag = tags.get(file);
    if (etag === undefined) tags.set(file, (etag = etagOf(file)));
    const headers = { ...PAGE_HEADERS, etag };
    if (c.req.header("if-none-match") === etag) return c.body(null, 304, headers);
    return c.body(file.body as Uint8Array<ArrayBuffer>, 200, { ...headers, "content-type": file.type });
  };
  app.get("/", (c) => serve(c, page.index));
  app.get("/assets/:name", (c) => {
    const file = page.assets.get(c.req.param("name"));
    if (!file) return c.notFound();
    return serve(c, file);
  });
}
