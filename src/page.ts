import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PageFile, PageFiles } from "./gateway/page.js";

/** Where the build puts the chat page (`npm run build`: scripts/build-web.mjs), beside the compiled gateway. */
export const PAGE_DIR = fileURLToPath(new URL("./web/", import.meta.url));

/** Media types of the files the page is made of; any other file in the folder is not served. */
const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * The chat page's files, read once at start-up and handed to the gateway as
 * bytes (the gateway reads no file system). A folder without `index.html`
 * (a build without the page) is a warning, and the gateway serves no page.
 */
export function loadPage(dir = PAGE_DIR): { page: PageFiles } | { warning: string } {
  const indexPath = path.join(dir, "index.html");
  if (!existsSync(indexPath)) {
    return { warning: `the web page is not built (no ${indexPath}): run \`npm run build\`; the API works, GET / answers 404` };
  }
  const read = (name: string): PageFile => ({ body: readFileSync(path.join(dir, name)), type: TYPES[path.extname(name)]! });
  const assets = new Map<string, PageFile>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name !== "index.html" && TYPES[path.extname(entry.name)] !== undefined) assets.set(entry.name, read(entry.name));
  }
  return { page: { index: read("index.html"), assets } };
}
