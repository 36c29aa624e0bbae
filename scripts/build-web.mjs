// The chat page's build (part of `npm run build`): web/src/*.ts bundled into
// one module, dist/web/app.js, beside the page's static files, so the
// package ships the page in dist/ and nothing is fetched at run time.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const web = path.join(root, "web");
const out = path.join(root, "dist", "web");

/** The files served as they are; app.js is made from web/src. */
export const STATIC_FILES = ["index.html", "app.css", "favicon.svg"];

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(web, "src", "main.ts")],
  outfile: path.join(out, "app.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  legalComments: "none",
  minify: true,
  logLevel: "warning",
});
for (const name of STATIC_FILES) copyFileSync(path.join(web, name), path.join(out, name));
