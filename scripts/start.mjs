// `npm start`: the gateway from dist/, at once. It rebuilds first only when a
// source file is newer than the build (after a `git pull`, an edit or a
// change of packages), which costs a few milliseconds of file stats when
// nothing changed. npm runs this
// with `exec`, so a signal sent to `npm start` reaches the gateway.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(root, "dist", "main.js");

/** The newest modification time of the sources under `dir` (TypeScript, and the web page's files). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (/\.(ts|html|css|svg)$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

const sources = path.join(root, "src");
// The chat page (web/, built into dist/web by scripts/build-web.mjs), where the project has one.
const page = path.join(root, "web");
const hasPage = existsSync(page) && existsSync(path.join(root, "scripts", "build-web.mjs"));
if (existsSync(sources)) {
  // These count as sources too: tsconfig.json; scripts/build.mjs (what is bundled, and how); and
  // npm's record of what node_modules holds, rewritten by every install, update or removal, since
  // the bundle carries copies of the packages it uses.
  const settings = ["tsconfig.json", path.join("scripts", "build.mjs"), path.join("node_modules", ".package-lock.json")].map(
    (file) => statSync(path.join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0,
  );
  const newest = Math.max(newestSource(sources), ...settings, hasPage ? newestSource(page) : 0);
  const missing = !existsSync(built) || (hasPage && !existsSync(path.join(root, "dist", "web", "index.html")));
  if (missing || newest > statSync(built).mtimeMs) {
    process.stderr.write("picoclaw: sources changed since the last build; building...\n");
    const result = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { stdio: "inherit" });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
}
await import(pathToFileURL(built).href);
